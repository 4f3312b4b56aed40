import CoreTree
import Foundation
import Logging
import RealtimeServer
import ServerCore
import Synchronization
import SyncClient
import SyncProtocol
import Testing

/// The client's PersistentConnection over a real WebSocket against the in-process server.
@Suite("PersistentConnection against the server")
struct PersistentConnectionServerTests {
    /// Records what the connection reports.
    final class Delegate: ConnectionDelegate {
        private let state = Mutex<(connects: Int, disconnects: Int, pushes: [(TreePath, DataPush)])>((0, 0, []))

        var connects: Int { state.withLock { $0.connects } }
        var disconnects: Int { state.withLock { $0.disconnects } }

        /// Whether any push at or above `path` carried `value` at `path`.
        func sawValue(_ value: Node, at path: TreePath) -> Bool {
            state.withLock { state in
                state.pushes.contains { pushPath, push in
                    guard let relative = path.relative(to: pushPath) else { return false }
                    switch push {
                    case .overwrite(let node): return node.child(at: relative) == value
                    case .merge(let children):
                        return children.contains { child in
                            guard let below = relative.relative(to: child.path) else { return false }
                            return child.node.child(at: below) == value
                        }
                    }
                }
            }
        }

        func connectionDidConnect(serverTimeOffsetMilliseconds: Int64, sessionID: String) {
            state.withLock { $0.connects += 1 }
        }
        func connectionDidDisconnect() { state.withLock { $0.disconnects += 1 } }
        func connectionDidReceive(_ push: DataPush, at path: TreePath, tag: Int?) {
            state.withLock { $0.pushes.append((path, push)) }
        }
        func connectionAuthStatusChanged(authenticated: Bool) {}
        func connectionListenRevoked(_ request: ListenRequest, status: WireStatus) {}
        func connectionDidShutDown(reason: String) {}
    }

    /// Collects callback values.
    final class Box<Value: Sendable>: Sendable {
        private let values = Mutex<[Value]>([])
        var all: [Value] { values.withLock { $0 } }
        func append(_ value: Value) { values.withLock { $0.append(value) } }
    }

    private static func quietLogger() -> Logger {
        var logger = Logger(label: "persistent-connection-test")
        logger.logLevel = .critical
        return logger
    }

    private func connect(port: Int, delegate: Delegate) -> PersistentConnection {
        var configuration = ConnectionConfiguration()
        configuration.backoff = BackoffPolicy(minimumDelay: .milliseconds(20), maximumDelay: .milliseconds(100))
        configuration.connectTimeout = .seconds(5)
        let connection = PersistentConnection(
            endpoint: ConnectionEndpoint(host: "127.0.0.1", port: port, secure: false, namespace: "test"),
            transport: WebSocketTransport(logger: Self.quietLogger()), delegate: delegate, configuration: configuration,
            logger: Self.quietLogger())
        connection.start()
        return connection
    }

    private static func defaultQuery(_ path: TreePath) -> ListenRequest {
        ListenRequest(path: path, query: .empty, identifier: "default", tag: nil)
    }

    @Test("A put, then a listen, receives the data; a get reads it")
    func putThenListen() async throws {
        let server = try await TestServer.start()
        let delegate = Delegate()
        let connection = connect(port: server.port, delegate: delegate)
        let statuses = Box<RequestStatus>()
        let value = try Node(jsonString: #"{"name":"ada","age":36}"#)
        connection.put(path: "users/ada", data: value, onComplete: { statuses.append($0) })
        connection.listen(Self.defaultQuery("users"), hash: { "" }, onComplete: { statuses.append($0) })
        #expect(try await eventually { statuses.all.count == 2 })
        #expect(statuses.all.allSatisfy { $0.isOK })
        // The listen's first data may come before or after the put commits; either way the value arrives.
        #expect(try await eventually { delegate.sawValue(value, at: "users/ada") })
        let read = Box<Result<Node, RequestFailure>>()
        connection.get(path: "users/ada/name", query: .empty, onComplete: { read.append($0) })
        #expect(try await eventually { read.all.count == 1 })
        #expect(try read.all[0].get() == Node(.string("ada")))
        connection.shutdown()
        await server.stop()
    }

    @Test("A put on one connection reaches a listener on another")
    func twoConnections() async throws {
        let server = try await TestServer.start()
        let listenerDelegate = Delegate()
        let listener = connect(port: server.port, delegate: listenerDelegate)
        let listened = Box<RequestStatus>()
        listener.listen(Self.defaultQuery("room"), hash: { "" }, onComplete: { listened.append($0) })
        #expect(try await eventually { listened.all.count == 1 })
        let writer = connect(port: server.port, delegate: Delegate())
        writer.put(path: "room/message", data: Node(.string("hello")))
        writer.merge(path: "room", children: [(path: "count", node: Node(.number(2))), (path: "message", node: .empty)])
        #expect(try await eventually { listenerDelegate.sawValue(Node(.string("hello")), at: "room/message") })
        #expect(try await eventually { listenerDelegate.sawValue(Node(.number(2)), at: "room/count") })
        #expect(try await eventually { listenerDelegate.sawValue(.empty, at: "room/message") }, "the merge's delete arrives")
        writer.shutdown()
        listener.shutdown()
        await server.stop()
    }

    @Test("A compare-and-put with a wrong hash gets datastale; with the current hash it succeeds")
    func compareAndPut() async throws {
        let server = try await TestServer.start()
        let connection = connect(port: server.port, delegate: Delegate())
        // The server may answer a stale compare-and-put before an earlier write commits: label the answers.
        let statuses = Box<(String, WireStatus)>()
        let current = Node(.number(1))
        connection.put(path: "counter", data: current, onComplete: { statuses.append(("plain", $0.status)) })
        connection.put(path: "counter", data: Node(.number(5)), hash: "not-the-hash", onComplete: { statuses.append(("wrong", $0.status)) })
        connection.put(path: "counter", data: Node(.number(2)), hash: current.hash, onComplete: { statuses.append(("right", $0.status)) })
        #expect(try await eventually { statuses.all.count == 3 })
        let answers = Dictionary(uniqueKeysWithValues: statuses.all)
        #expect(answers == ["plain": .ok, "wrong": .dataStale, "right": .ok])
        let read = Box<Result<Node, RequestFailure>>()
        connection.get(path: "counter", query: .empty, onComplete: { read.append($0) })
        #expect(try await eventually { read.all.count == 1 })
        #expect(try read.all[0].get() == Node(.number(2)))
        connection.shutdown()
        await server.stop()
    }

    @Test("When the server stops, the client reconnects to a new server on the same port and restores its listens")
    func reconnectAfterServerRestart() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await TestServer.start(backend: "sqlite", directory: directory)
        let delegate = Delegate()
        let connection = connect(port: first.port, delegate: delegate)
        let listened = Box<RequestStatus>()
        connection.put(path: "kept", data: Node(.string("before")))
        connection.listen(Self.defaultQuery("kept"), hash: { "" }, onComplete: { listened.append($0) })
        #expect(try await eventually { listened.all.count == 1 })
        #expect(try await eventually { delegate.sawValue(Node(.string("before")), at: "kept") })
        await first.stop()
        #expect(try await eventually { delegate.disconnects == 1 })

        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: first.port, dataDirectory: directory, backend: "sqlite", logLevel: .critical)
        let second = RealtimeServer(configuration: configuration, backends: TestServer.backends, logger: Self.quietLogger())
        let secondTask = Task { try await second.run() }
        _ = try await second.port()
        #expect(try await eventually(timeout: .seconds(10)) { delegate.connects == 2 })
        // The listen was restored: a write from another client reaches it.
        #expect(try await eventually { listened.all.count == 2 })
        let other = connect(port: first.port, delegate: Delegate())
        other.put(path: "kept", data: Node(.string("after")))
        #expect(try await eventually { delegate.sawValue(Node(.string("after")), at: "kept") })
        other.shutdown()
        connection.shutdown()
        secondTask.cancel()
        _ = try? await secondTask.value
    }

    @Test("An onDisconnect put runs when the client shuts down")
    func onDisconnectOnShutdown() async throws {
        let server = try await TestServer.start()
        let watcherDelegate = Delegate()
        let watcher = connect(port: server.port, delegate: watcherDelegate)
        let listened = Box<RequestStatus>()
        watcher.listen(Self.defaultQuery("presence"), hash: { "" }, onComplete: { listened.append($0) })
        #expect(try await eventually { listened.all.count == 1 })

        let client = connect(port: server.port, delegate: Delegate())
        let registered = Box<RequestStatus>()
        client.put(path: "presence/ada", data: Node(.string("online")))
        client.onDisconnectPut(path: "presence/ada", data: Node(.string("offline")), onComplete: { registered.append($0) })
        #expect(try await eventually { registered.all == [.ok] })
        #expect(try await eventually { watcherDelegate.sawValue(Node(.string("online")), at: "presence/ada") })
        client.shutdown()
        #expect(try await eventually { watcherDelegate.sawValue(Node(.string("offline")), at: "presence/ada") })
        watcher.shutdown()
        await server.stop()
    }
}
