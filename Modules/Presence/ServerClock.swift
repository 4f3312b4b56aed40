import Foundation

/// The client's estimate of the server's clock: local time plus the offset learnt from the
/// handshake's `ts` (no round-trip compensation, as the Firebase clients do).
///
/// It feeds `ServerValue.timestamp()` placeholders resolved locally, push ids and
/// `/.info/serverTimeOffset`.
public struct ServerClock: Sendable, Equatable {
    /// Milliseconds to add to local time to estimate server time.
    public var offsetMilliseconds: Int64

    /// A clock with the given offset (0 until the first handshake).
    public init(offsetMilliseconds: Int64 = 0) {
        self.offsetMilliseconds = offsetMilliseconds
    }

    /// The offset that makes local time `localMilliseconds` read as the server's `serverMilliseconds`.
    public static func offset(serverMilliseconds: Int64, localMilliseconds: Int64) -> Int64 {
        serverMilliseconds - localMilliseconds
    }

    /// Local wall-clock time in milliseconds since 1970.
    public static func localMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// The estimated server time in milliseconds since 1970 at local time `localMilliseconds`.
    public func serverMilliseconds(atLocal localMilliseconds: Int64 = ServerClock.localMilliseconds()) -> Int64 {
        localMilliseconds + offsetMilliseconds
    }
}
