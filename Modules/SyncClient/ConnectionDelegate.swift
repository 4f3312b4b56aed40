public import CoreTree
public import SyncProtocol

/// Receives what a ``PersistentConnection`` reports. Calls arrive one at a time, in order, from
/// the connection's actor; an implementation should return quickly (hop to its own queue).
public protocol ConnectionDelegate: AnyObject, Sendable {
    /// The handshake arrived: `serverTimeOffsetMilliseconds` is the server's clock minus the local
    /// clock; `sessionID` is the server's id for this connection.
    func connectionDidConnect(serverTimeOffsetMilliseconds: Int64, sessionID: String)
    /// A connection that had completed its handshake was lost or closed.
    func connectionDidDisconnect()
    /// The server pushed data for a listen at `path` (with the listen's `tag` for a tagged query).
    func connectionDidReceive(_ push: DataPush, at path: TreePath, tag: Int?)
    /// The server accepted (`true`) or rejected or revoked (`false`) the auth token.
    func connectionAuthStatusChanged(authenticated: Bool)
    /// The server revoked a listen (a `c` push, `status` ``SyncProtocol/WireStatus/permissionDenied``);
    /// it has been dropped.
    func connectionListenRevoked(_ request: ListenRequest, status: WireStatus)
    /// The server told the client to go away (control `s`); the connection will not reconnect.
    func connectionDidShutDown(reason: String)
}
