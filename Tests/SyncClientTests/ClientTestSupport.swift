import CoreTree
import Foundation
import Synchronization
import Testing
@testable import SyncClient
import SyncProtocol

/// Everything a ``RecordingDelegate`` saw.
enum DelegateEvent: Sendable {
    case connected(offset: Int64, sessionID: String)
    case disconnected
    case push(DataPush, path: TreePath, tag: Int?)
    case authenticated(Bool)
    case revoked(ListenRequest, status: WireStatus)
    case shutDown(String)
}

/// A delegate that records its calls in order.
final class RecordingDelegate: ConnectionDelegate {
    private let log = Mutex<[DelegateEvent]>([])

    var events: [DelegateEvent] { log.withLock { $0 } }

    var connectCount: Int { events.count { if case .connected = $0 { true } else { false } } }
    var disconnectCount: Int { events.count { if case .disconnected = $0 { true } else { false } } }
    var authReports: [Bool] { events.compactMap { if case .authenticated(let value) = $0 { value } else { nil } } }
    var pushes: [(push: DataPush, path: TreePath, tag: Int?)] {
        events.compactMap { if case .push(let push, let path, let tag) = $0 { (push, path, tag) } else { nil } }
    }

    func connectionDidConnect(serverTimeOffsetMilliseconds: Int64, sessionID: String) {
        log.withLock { $0.append(.connected(offset: serverTimeOffsetMilliseconds, sessionID: sessionID)) }
    }
    func connectionDidDisconnect() { log.withLock { $0.append(.disconnected) } }
    func connectionDidReceive(_ push: DataPush, at path: TreePath, tag: Int?) {
        log.withLock { $0.append(.push(push, path: path, tag: tag)) }
    }
    func connectionAuthStatusChanged(authenticated: Bool) { log.withLock { $0.append(.authenticated(authenticated)) } }
    func connectionListenRevoked(_ request: ListenRequest, status: WireStatus) {
        log.withLock { $0.append(.revoked(request, status: status)) }
    }
    func connectionDidShutDown(reason: String) { log.withLock { $0.append(.shutDown(reason)) } }
}

/// Collects values from callbacks, from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    var all: [Value] { values.withLock { $0 } }
    func append(_ value: Value) { values.withLock { $0.append(value) } }
}

/// A token provider that fails while `failing` is set and records each call's `forceRefresh`.
final class ScriptedTokenProvider: AuthTokenProvider {
    struct NoToken: Error {}
    private struct State {
        var token: String?
        var failuresLeft: Int
        var calls: [Bool] = []
    }
    private let state: Mutex<State>

    init(token: String?, failures: Int = 0) {
        state = Mutex(State(token: token, failuresLeft: failures))
    }

    var calls: [Bool] { state.withLock { $0.calls } }
    func setToken(_ token: String?) { state.withLock { $0.token = token } }

    func token(forceRefresh: Bool) async throws -> String? {
        try state.withLock { state in
            state.calls.append(forceRefresh)
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                throw NoToken()
            }
            return state.token
        }
    }
}

/// One request the client sent, as the server parses it.
struct SentRequest {
    let number: Int
    let action: ClientAction
    let text: String

    var name: String { action.name }
}

/// The server side of one in-memory connection, scripted by a test.
struct FakeServer {
    let side: InMemoryServerSide

    static func accept(_ transport: InMemoryTransport, timeout: Duration = .seconds(5)) async throws -> FakeServer {
        FakeServer(side: try await transport.accept(timeout: timeout))
    }

    /// Accepts and sends the handshake.
    static func connect(
        _ transport: InMemoryTransport, sessionID: String = "session-1", timestamp: Int64? = nil
    ) async throws -> FakeServer {
        let server = try await accept(transport)
        server.side.sendHandshake(timestamp: timestamp, sessionID: sessionID)
        return server
    }

    /// The next request the client sent.
    func nextRequest(timeout: Duration = .seconds(5)) async throws -> SentRequest {
        guard let text = try await side.receiveMessage(timeout: timeout) else {
            throw TestError("the client closed the connection")
        }
        guard case .request(let number, let action) = try ClientMessage.parse(text) else {
            throw TestError("not a request: \(text)")
        }
        return SentRequest(number: number, action: try action.get(), text: text)
    }

    /// The next `count` requests.
    func nextRequests(_ count: Int) async throws -> [SentRequest] {
        var requests: [SentRequest] = []
        for _ in 0..<count { requests.append(try await nextRequest()) }
        return requests
    }

    /// Whether the client sends no request within `timeout`.
    func expectSilence(for timeout: Duration = .milliseconds(100)) async throws -> Bool {
        do {
            let message = try await side.receiveMessage(timeout: timeout)
            return message == nil
        } catch InMemoryTransportError.timedOut {
            return true
        }
    }

    func reply(_ request: SentRequest, status: WireStatus = .ok, dataJSON: String = "\"\"") {
        side.sendReply(request.number, status: status, dataJSON: dataJSON)
    }
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// Fast timings for tests: millisecond backoff, long keep-alive, no stats.
func fastConfiguration(_ adjust: (inout ConnectionConfiguration) -> Void = { _ in }) -> ConnectionConfiguration {
    var configuration = ConnectionConfiguration()
    configuration.keepAliveInterval = .seconds(30)
    configuration.connectTimeout = .seconds(20)
    configuration.backoff = BackoffPolicy(
        minimumDelay: .milliseconds(5), maximumDelay: .milliseconds(20), successfulConnectionDuration: .seconds(30))
    configuration.sdkStatsName = nil
    adjust(&configuration)
    return configuration
}

let testEndpoint = ConnectionEndpoint(host: "localhost", port: 9000, secure: false, namespace: "test")

/// A started connection over `transport`.
func startConnection(
    _ transport: InMemoryTransport, delegate: RecordingDelegate, provider: (any AuthTokenProvider)? = nil,
    configuration: ConnectionConfiguration = fastConfiguration(), start: Bool = true
) -> PersistentConnection {
    let connection = PersistentConnection(
        endpoint: testEndpoint, transport: transport, delegate: delegate, authTokenProvider: provider,
        configuration: configuration)
    if start { connection.start() }
    return connection
}

extension Node {
    /// A node from JSON test input.
    static func json(_ text: String) -> Node {
        try! Node(jsonString: text)
    }
}

/// A request's put fields, or nil when it is not a put.
func putFields(_ request: SentRequest) -> (path: TreePath, data: Node, hash: String?)? {
    guard case .put(let path, let data, let hash, _) = request.action else { return nil }
    return (path, data, hash)
}
