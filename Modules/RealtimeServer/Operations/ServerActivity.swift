import Synchronization
import ServerCore

/// What a running server holds for its clients right now: open connections, WebSocket sessions
/// and event streams, and the bytes queued for them. For operators (and tests) to watch; every
/// count returns to zero when the clients are gone.
public final class ServerActivity: Sendable {
    private let connections = Atomic<Int>(0)
    private let webSockets = Atomic<Int>(0)
    private let eventStreams = Atomic<Int>(0)
    private let departures = Mutex(Departures())
    private let nextDeparture = Atomic<Int>(0)
    /// The server-wide cap on queued outbound bytes, and how much of it is in use.
    public let outbound: OutboundBudget
    /// The WebSockets and event streams open now, with who and what each holds.
    public let directory = ConnectionDirectory()
    /// The server's metrics, served at `/metrics`.
    let metrics = ServerMetrics()

    init(maxQueuedBytesTotal: Int) {
        outbound = OutboundBudget(limit: maxQueuedBytesTotal)
    }

    /// Open client connections (HTTP, upgraded WebSockets and event streams alike).
    public var openConnections: Int { connections.load(ordering: .relaxed) }
    /// Open WebSocket connections.
    public var openWebSockets: Int { webSockets.load(ordering: .relaxed) }
    /// Whether a graceful shutdown has begun.
    public var isShuttingDown: Bool { departures.withLock { $0.stage != .running } }
    /// Open REST event streams.
    public var openEventStreams: Int { eventStreams.load(ordering: .relaxed) }

    /// Counts a new connection; returns how many are open with it.
    func connectionOpened() -> Int {
        metrics.connectionAccepted()
        return connections.add(1, ordering: .relaxed).newValue
    }
    func connectionClosed() { connections.subtract(1, ordering: .relaxed) }
    func webSocketOpened() { webSockets.add(1, ordering: .relaxed) }
    func webSocketClosed() { webSockets.subtract(1, ordering: .relaxed) }
    func eventStreamOpened() { eventStreams.add(1, ordering: .relaxed) }
    func eventStreamClosed() { eventStreams.subtract(1, ordering: .relaxed) }

    /// Registers how to end a connection at shutdown: `polite` runs when shutdown begins (an
    /// event stream's final event, a WebSocket's close frame), `force` when the shutdown deadline
    /// passes with the connection still open. Returns the key to withdraw it with when it closes.
    ///
    /// A connection registered after shutdown began (accepted from the backlog meanwhile) is asked
    /// to go at once, and one registered after the cut-off is cut off at once: a connection the
    /// shutdown never saw would otherwise hold the stop until its own timeouts.
    func onShutdown(polite: (@Sendable () -> Void)? = nil, force: (@Sendable () -> Void)? = nil) -> Int {
        let key = nextDeparture.add(1, ordering: .relaxed).newValue
        let stage = departures.withLock { departures in
            if departures.stage != .cutOff {
                departures.waiting[key] = Departure(polite: departures.stage == .running ? polite : nil, force: force)
            }
            return departures.stage
        }
        switch stage {
        case .running:
            break
        case .asked:
            polite?()
        case .cutOff:
            polite?()
            force?()
        }
        return key
    }

    /// Withdraws a registration of ``onShutdown(polite:force:)``.
    func withdraw(_ key: Int) {
        _ = departures.withLock { $0.waiting.removeValue(forKey: key) }
    }

    /// Asks every long-lived client to go now, and cuts off every connection still open after
    /// `deadline`.
    func beginShutdown(deadline: Duration) {
        let polite = departures.withLock { departures in
            departures.stage = .asked
            return departures.waiting.values.compactMap(\.polite)
        }
        for depart in polite { depart() }
        Task { [self] in
            let start = ContinuousClock.now
            while openConnections > 0, start.duration(to: .now) < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
            let force = departures.withLock { departures in
                defer { departures.waiting = [:] }
                departures.stage = .cutOff
                return departures.waiting.values.compactMap(\.force)
            }
            for cut in force { cut() }
        }
    }

    private struct Departure {
        let polite: (@Sendable () -> Void)?
        let force: (@Sendable () -> Void)?
    }

    /// Where a shutdown is: not begun, clients asked to go, the rest cut off.
    private enum ShutdownStage {
        case running, asked, cutOff
    }

    /// The registered departures and the shutdown's stage, changed together.
    private struct Departures {
        var waiting: [Int: Departure] = [:]
        var stage = ShutdownStage.running
    }
}
