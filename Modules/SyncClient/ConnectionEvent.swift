import SyncProtocol
/// Everything a ``PersistentConnection`` reacts to, drained in order by one loop: the public
/// commands (in call order) and what its own tasks report, tagged with the connection attempt
/// they belong to so that reports about an abandoned attempt are ignored.
enum ConnectionEvent: Sendable {
    // Commands.
    case start
    case listen(ListenRequest, hash: @Sendable () async -> String, onComplete: @Sendable (RequestStatus) -> Void)
    case unlisten(ListenRequest)
    case write(QueuedWrite)
    case onDisconnect(QueuedWrite)
    case get(PendingGet)
    case refreshAuthToken
    case goOffline
    case goOnline
    case purgeOutstandingWrites
    case shutdown
    /// Runs its body once every command enqueued before it has been handled (also after shutdown).
    case barrier(@Sendable () -> Void)

    // Reports from the connection's tasks.
    case tokenFetched(attempt: Int, Result<String?, any Error>)
    case tokenRefreshed(attempt: Int, Result<String?, any Error>)
    case transportOpened(attempt: Int, any TransportConnection)
    case transportFailed(attempt: Int, any Error)
    case connectTimedOut(attempt: Int)
    /// A get waited ``ConnectionConfiguration/getConnectTimeout`` without being sent.
    case getTimedOut(id: Int)
    case frameReceived(attempt: Int, String)
    case transportClosed(attempt: Int, (any Error)?)
    case keepAliveDue(attempt: Int)
    case retryDue(timer: Int)
}
