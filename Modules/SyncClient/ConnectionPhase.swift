import SyncProtocol
/// Where a ``PersistentConnection`` is in connecting (Android's states, plus the waits between them).
enum ConnectionPhase: Equatable {
    /// No connection and no attempt under way (not started, offline, shut down or killed).
    case idle
    /// Waiting out the backoff before the next attempt.
    case waitingToRetry(timer: Int)
    /// Asking the token provider for a token.
    case gettingToken
    /// Opening the transport.
    case connecting
    /// Open, waiting for the server's handshake.
    case handshaking
    /// Handshake done; the auth request is out.
    case authenticating
    /// Ready: requests go out.
    case connected

    /// Whether the server's handshake has arrived on the current connection.
    var isPastHandshake: Bool { self == .authenticating || self == .connected }
}
