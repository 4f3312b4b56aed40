import SyncProtocol
/// A put, merge or onDisconnect operation waiting to be sent or acknowledged.
struct QueuedWrite: Sendable {
    /// The action: `p`, `m`, `o`, `om` or `oc`.
    let action: String
    /// The request body JSON.
    let body: String
    /// Its exactly-once stamp, added to the body for servers that honour it.
    var stamp: WriteStamp? = nil
    /// Whether it is a compare-and-set put (`h`), failed with `disconnected` when its connection drops after sending.
    let hasHash: Bool
    /// Called once with the server's answer (or a client-side status).
    let onComplete: (@Sendable (RequestStatus) -> Void)?
    /// Whether it went out on the current connection.
    var sent = false
}
