import SyncProtocol
import Synchronization

/// A transport for tests: each ``connect(to:lastSessionID:)`` creates an in-memory connection
/// whose server side a test takes with ``accept(timeout:)`` and scripts as a fake server.
public final class InMemoryTransport: Transport {
    /// What ``connect(to:lastSessionID:)`` does.
    public enum ConnectBehavior: Sendable, Equatable {
        /// Opens a connection (the default).
        case accept
        /// Throws ``InMemoryTransportError/refused``, as a server that is down.
        case refuse
        /// Never returns until cancelled, as a server that does not answer.
        case hang
    }

    private struct State {
        var behavior = ConnectBehavior.accept
        var attempts: [String?] = []
    }

    private let state = Mutex(State())
    private let pending = AsyncQueue<InMemoryServerSide>()

    /// Makes a transport that accepts connections.
    public init() {}

    /// What the next connects do.
    public var connectBehavior: ConnectBehavior {
        get { state.withLock { $0.behavior } }
        set { state.withLock { $0.behavior = newValue } }
    }

    /// How many times the client tried to connect (refused and hung attempts included).
    public var connectAttempts: Int { state.withLock { $0.attempts.count } }

    /// The `lastSessionID` of each connect attempt, in order.
    public var lastSessionIDs: [String?] { state.withLock { $0.attempts } }

    /// Opens a connection (or refuses, or hangs, per ``connectBehavior``).
    public func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection {
        let behavior = state.withLock { state in
            state.attempts.append(lastSessionID)
            return state.behavior
        }
        switch behavior {
        case .accept:
            break
        case .refuse:
            throw InMemoryTransportError.refused
        case .hang:
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        let server = InMemoryServerSide(endpoint: endpoint, lastSessionID: lastSessionID)
        pending.push(server)
        return InMemoryClientConnection(server: server)
    }

    /// The server side of the next connection, waiting up to `timeout` for the client to connect.
    ///
    /// - Throws: ``InMemoryTransportError/timedOut`` when no connection came in time.
    public func accept(timeout: Duration = .seconds(10)) async throws -> InMemoryServerSide {
        do {
            guard let server = try await pending.next(timeout: timeout) else { throw InMemoryTransportError.closed }
            return server
        } catch is AsyncQueue<InMemoryServerSide>.TimedOut {
            throw InMemoryTransportError.timedOut
        }
    }

    /// Waits `timeout`, then tells whether the client made no connect attempt meanwhile.
    public func expectNoConnection(within timeout: Duration) async -> Bool {
        let before = connectAttempts
        try? await Task.sleep(for: timeout)
        return connectAttempts == before
    }
}
