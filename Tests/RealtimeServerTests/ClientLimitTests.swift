import Foundation
import Logging
import RealtimeServer
import ServerCore
import ServiceLifecycle
import Testing

/// What one client may hold is bounded: listens and onDisconnect bytes per WebSocket connection,
/// and namespaces open at once (idle ones are closed to make room, and reopen with their data).
@Suite("Per-client limits")
struct ClientLimitTests {
    @Test("A connection's listens stop at the cap; re-listening the same query and unlistening free room")
    func listenCap() async throws {
        let server = try await TestServer.start { $0.maxListensPerConnection = 3 }
        let client = WireClient(port: server.port)
        for index in 0..<3 {
            #expect(try await client.request("q", #"{"p":"/l\#(index)","h":""}"#)["s"] as? String == "ok")
        }
        let refused = try await client.request("q", #"{"p":"/l3","h":""}"#)
        #expect(refused["s"] as? String == "failure")
        #expect((refused["d"] as? String)?.contains("3 listens") == true, "\(refused)")
        #expect(try await client.request("q", #"{"p":"/l0","h":""}"#)["s"] as? String == "ok", "the same listen again is no new one")
        #expect(try await client.request("n", #"{"p":"/l1"}"#)["s"] as? String == "ok")
        #expect(try await client.request("q", #"{"p":"/l3","h":""}"#)["s"] as? String == "ok")
        await client.close()
        await server.stop()
    }

    @Test("onDisconnect bytes stop at the cap; a set replaces the one it overwrites; cancelling frees room; what was held runs")
    func onDisconnectCap() async throws {
        let server = try await TestServer.start { $0.maxOnDisconnectBytesPerConnection = 2_000 }
        let client = WireClient(port: server.port)
        let big = String(repeating: "x", count: 1_200)
        #expect(try await client.request("o", #"{"p":"/a","d":"\#(big)"}"#)["s"] as? String == "ok")
        #expect(try await client.request("o", #"{"p":"/a","d":"\#(big)"}"#)["s"] as? String == "ok", "a set at the same path replaces")
        let refused = try await client.request("o", #"{"p":"/b","d":"\#(big)"}"#)
        #expect(refused["s"] as? String == "too_big", "\(refused)")
        #expect(try await client.request("om", #"{"p":"/c","d":{"x":"\#(big)"}}"#)["s"] as? String == "too_big")
        #expect(try await client.request("oc", #"{"p":"/a"}"#)["s"] as? String == "ok")
        #expect(try await client.request("o", #"{"p":"/b","d":"\#(big)"}"#)["s"] as? String == "ok")
        await client.close()
        #expect(try await eventually { try await http("GET", "\(server.baseURL)/b.json?ns=test").body == "\"\(big)\"" })
        #expect(try await http("GET", "\(server.baseURL)/a.json?ns=test").body == "null", "the cancelled write never ran")
        await server.stop()
    }

    @Test("Past the open-namespace cap the least recently used idle namespace closes and later reopens with its data; when all are in use, 503 with Retry-After")
    func namespaceCap() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-nscap-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await TestServer.start(backend: "sqlite", directory: directory) { $0.maxOpenNamespaces = 2 }
        let base = server.baseURL
        for name in ["one", "two", "three", "four"] {
            #expect(try await http("PUT", "\(base)/v.json?ns=\(name)", body: "\"\(name)\"").status == 200)
        }
        for name in ["one", "two", "three", "four"] {
            #expect(try await http("GET", "\(base)/v.json?ns=\(name)").body == "\"\(name)\"", "reopened with its data")
        }
        // Two streams hold two namespaces: a third cannot open.
        let first = try await EventStreamSocket(port: server.port, path: "/v", namespace: "one")
        let second = try await EventStreamSocket(port: server.port, path: "/v", namespace: "two")
        let refused = try await http("GET", "\(base)/v.json?ns=three")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.body.contains("namespaces open"), "\(refused.body)")
        #expect(try await http("GET", "\(base)/v.json?ns=one").body == "\"one\"", "open namespaces still answer")
        first.closeWithFIN()
        #expect(try await eventually { try await http("GET", "\(base)/v.json?ns=three").body == "\"three\"" })
        second.closeWithRST()
        await server.stop()
    }

    @Test("At shutdown an event stream gets a final event and ends, a WebSocket is closed, and the server stops within its deadline")
    func shutdownDeadline() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-shutdown-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory, backend: "memory",
            logLevel: .critical, shutdownTimeout: .seconds(2))
        let realtime = RealtimeServer(configuration: configuration, backends: TestServer.backends, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [realtime], logger: logger))
        let running = Task { try await group.run() }
        let server = (port: try await realtime.port(), baseURL: "")
        let stream = try await EventStreamSocket(port: server.port, path: "/s")
        let client = WireClient(port: server.port)
        #expect(try await client.request("q", #"{"p":"/s","h":""}"#)["s"] as? String == "ok")
        let stalled = try connectLoopbackSocket(port: server.port)
        defer { close(stalled) }
        let partial = Array("PUT /s.json?ns=test HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{".utf8)
        _ = partial.withUnsafeBytes { send(stalled, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let clock = ContinuousClock()
        let start = clock.now
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        let took = start.duration(to: clock.now)
        // Without the deadline the stalled PUT would hold the stop until its 120 s body timeout;
        // the bound leaves room for a loaded 2-core machine (alone this takes 2.03 s; once, under
        // the whole suite in parallel, 8.6 s).
        #expect(took < .seconds(30), "stopped in \(took)")
        let rest = try await stream.readToEnd(timeout: .seconds(5))
        #expect(rest.contains("retry: 1000"), "the stream's final event: \(rest)")
        #expect(try await eventually(timeout: .seconds(5)) { await client.isClosed })
        await client.close()
    }
}

/// A namespace that takes long to open stalls nobody else.
@Suite("Namespace opening")
struct NamespaceOpeningTests {
    @Test("While one namespace opens, others answer; its WebSocket is closed with 1013 (try again later) after the handshake timeout; its REST request waits and then succeeds")
    func slowOpen() async throws {
        let server = try await TestServer.start(backend: "gated") { $0.handshakeTimeout = .milliseconds(300) }
        // Whatever fails below, the gate opens and the server stops: a store open left waiting
        // forever kept the server's shutdown, and the test run, from ending.
        var gateOpened = false
        defer {
            if !gateOpened { OpeningGate.open() }
            Task { await server.stop() }
        }
        // This request waits for the gate, opened only after every check below: its timeout must
        // outlast them however slowly a loaded machine runs them (20 s did not, once, in CI).
        let waiting = Task { try await http("PUT", "\(server.baseURL)/v.json?ns=slow", body: "1", timeout: 300) }
        for index in 0..<5 {
            #expect(try await http("PUT", "\(server.baseURL)/v.json?ns=other", body: "\(index)").status == 200)
        }
        // The upgrade is accepted, then closed with 1013 "try again later" and the reason.
        let (bytes, ending) = try await rawWebSocketUpgrade(port: server.port, namespace: "slow")
        let frames = String(decoding: bytes, as: UTF8.self)
        #expect(frames.hasPrefix("HTTP/1.1 101"), "\(frames) (the read ended: \(ending))")
        #expect(frames.contains("still opening"), "\(frames)")
        let close = try #require(bytes.firstIndex(of: 0x88), "a close frame")
        #expect(close + 3 < bytes.count && Int(bytes[close + 2]) << 8 | Int(bytes[close + 3]) == 1013, "close code 1013")
        let plain = try await http("GET", "\(server.baseURL)/.ws?ns=slow")
        #expect(plain.status == 503 && plain.header("Retry-After") == "1", "a request without the upgrade hears why too")
        OpeningGate.open()
        gateOpened = true
        #expect(try await waiting.value.status == 200)
        #expect(try await http("GET", "\(server.baseURL)/v.json?ns=slow").body == "1")
    }
}

/// Sends a WebSocket upgrade on a raw socket and returns the bytes the server sent for a WebSocket upgrade until its close frame, and how the read ended.
private func rawWebSocketUpgrade(port: Int, namespace: String) async throws -> (bytes: [UInt8], ending: String) {
    let fd = try connectLoopbackSocket(port: port)
    defer { close(fd) }
    let request = "GET /.ws?ns=\(namespace)&v=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let clock = ContinuousClock()
    let start = clock.now
    // Only catches a server that never answers: a loaded machine may take its time.
    let deadline = start + .seconds(120)
    var ending = "no close frame within 120 s"
    while clock.now < deadline {
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        if n > 0 {
            received += buffer[0..<n]
            if let close = received.firstIndex(of: 0x88), close + 1 < received.count,
               received.count >= close + 2 + Int(received[close + 1] & 0x7F) {
                ending = "a close frame"
                break
            }
        } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
            ending = n == 0 ? "the server closed the connection" : "recv failed: errno \(errno)"
            break
        } else {
            try await Task.sleep(for: .milliseconds(5))
        }
    }
    return (received, "\(ending) after \(start.duration(to: clock.now))")
}
