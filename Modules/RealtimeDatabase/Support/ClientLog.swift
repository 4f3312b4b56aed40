import Logging
import Synchronization

/// The client's logger, whose level ``Database/setLoggingEnabled(_:)`` switches between debug
/// (everything the client says) and info (the default).
enum ClientLog {
    private static let state = Mutex(Logger(label: "rtdb.client"))

    /// The logger, with the level set last.
    static var logger: Logger { state.withLock { $0 } }

    /// Debug logging on or off.
    static func setEnabled(_ enabled: Bool) {
        state.withLock { $0.logLevel = enabled ? .debug : .info }
    }
}
