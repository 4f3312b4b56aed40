import SyncProtocol
/// What a request that is out waits for: how to handle its reply.
enum PendingReply: Sendable {
    /// Stats, unlisten and unauth: nothing to do.
    case ignored
    /// The auth request; `initial` when it is the connection's first, whose success restores state.
    case auth(initial: Bool)
    /// A listen (by key and serial).
    case listen(ListenKey, serial: Int)
    /// A put or merge (by operation id).
    case write(Int)
    /// An onDisconnect operation (by operation id).
    case onDisconnect(Int)
    /// A get (by operation id).
    case get(Int)
}
