public import Foundation

/// Placeholders the server replaces with its own values when it applies a write
/// (Firebase's `ServerValue`). The client shows an estimate at once, from its server clock.
public enum ServerValue {
    /// The server's time in milliseconds since 1970 at the moment the write is applied.
    public static func timestamp() -> [AnyHashable: Any] {
        [".sv": "timestamp"]
    }

    /// Adds `delta` to the number stored at the location (or stores `delta` if there is none),
    /// atomically on the server.
    public static func increment(_ delta: NSNumber) -> [AnyHashable: Any] {
        [".sv": ["increment": delta]]
    }
}
