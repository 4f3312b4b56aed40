import SyncProtocol
/// Opens connections to a server: over WebSocket (``WebSocketTransport``) or in memory for tests
/// (``InMemoryTransport``).
public protocol Transport: Sendable {
    /// Opens a connection to `endpoint`, sending `lastSessionID` (as `ls`) when there is one.
    ///
    /// - Throws: when the connection cannot be opened. Cancelling the calling task abandons the attempt.
    func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection
}
