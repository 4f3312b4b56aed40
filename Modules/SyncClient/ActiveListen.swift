import SyncProtocol
/// A listen the connection keeps (and re-sends on every reconnect) until it is unlistened, refused or revoked.
struct ActiveListen: Sendable {
    /// What it asks for.
    let request: ListenRequest
    /// The hash of the client's cached data, asked again each time the listen is sent. Async:
    /// the client computes it in its own serial domain, and the connection waits without blocking.
    let hash: @Sendable () async -> String
    /// Called with the server's answer each time the listen is sent.
    let onComplete: @Sendable (RequestStatus) -> Void
    /// Tells this listen from a later one with the same key.
    let serial: Int
}
