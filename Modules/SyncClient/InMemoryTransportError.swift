import SyncProtocol
/// Failures of ``InMemoryTransport`` connections.
public enum InMemoryTransportError: Error, Sendable, Equatable {
    /// The transport refuses connections (``InMemoryTransport/ConnectBehavior/refuse``).
    case refused
    /// The connection was closed, so nothing can be sent on it.
    case closed
    /// The fake server dropped the connection abruptly (``InMemoryServerSide/drop(_:)``).
    case dropped
    /// Nothing arrived within the time a test allowed.
    case timedOut
}
