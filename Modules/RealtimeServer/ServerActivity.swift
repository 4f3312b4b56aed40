import Synchronization

/// What a running server holds for its clients right now: open WebSocket connections and event
/// streams, and the bytes queued for them. For operators (and tests) to watch; every count
/// returns to zero when the clients are gone.
public final class ServerActivity: Sendable {
    private let webSockets = Atomic<Int>(0)
    private let eventStreams = Atomic<Int>(0)
    /// The server-wide cap on queued outbound bytes, and how much of it is in use.
    public let outbound: OutboundBudget

    init(maxQueuedBytesTotal: Int) {
        outbound = OutboundBudget(limit: maxQueuedBytesTotal)
    }

    /// Open WebSocket connections.
    public var openWebSockets: Int { webSockets.load(ordering: .relaxed) }
    /// Open REST event streams.
    public var openEventStreams: Int { eventStreams.load(ordering: .relaxed) }

    func webSocketOpened() { webSockets.add(1, ordering: .relaxed) }
    func webSocketClosed() { webSockets.subtract(1, ordering: .relaxed) }
    func eventStreamOpened() { eventStreams.add(1, ordering: .relaxed) }
    func eventStreamClosed() { eventStreams.subtract(1, ordering: .relaxed) }
}
