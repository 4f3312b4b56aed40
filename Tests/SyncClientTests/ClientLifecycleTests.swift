import CoreTree
import Testing
@testable import SyncClient
import SyncProtocol
import TestSupport

@Suite("Client: keep-alive, offline, shutdown and bad input")
struct ClientLifecycleTests {
    @Test("After the keep-alive interval with nothing sent, the client sends 0, and again after each idle interval")
    func keepAlive() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        let connection = startConnection(
            transport, delegate: RecordingDelegate(),
            configuration: fastConfiguration { $0.keepAliveInterval = .seconds(45); $0.clock = ConnectionClock(clock) })
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        connection.put(path: "a", data: Node(.number(1)))
        let put = try await server.side.receiveFrame()
        #expect(put?.hasPrefix("{") == true)
        // The keep-alive timer sleeps on the clock; nothing goes out until the interval passes.
        await clock.waitForSleepers(atLeast: 1)
        clock.advance(by: .seconds(44))
        await #expect(throws: InMemoryTransportError.timedOut) { try await server.side.receiveFrame(timeout: .milliseconds(100)) }
        clock.advance(by: .seconds(1))
        #expect(try await server.side.receiveFrame() == "0")
        await clock.waitForSleepers(atLeast: 1)
        clock.advance(by: .seconds(45))
        #expect(try await server.side.receiveFrame() == "0", "and again after the next idle interval")
    }

    @Test("goOffline closes and stops reconnecting, keeping requests queued; goOnline reconnects at once")
    func offlineOnline() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        connection.goOffline()
        #expect(await eventually { server.side.isClosedByClient })
        #expect(await eventually { delegate.disconnectCount == 1 })
        connection.put(path: "queued", data: Node(.number(1)))
        #expect(await transport.expectNoConnection(within: .milliseconds(150)), "no reconnect while offline")
        #expect(await connection.isConnected == false)
        connection.goOnline()
        let second = try await FakeServer.connect(transport)
        let put = try await second.nextRequest()
        #expect(putFields(put)?.path == "queued")
        #expect(transport.connectAttempts == 2)
    }

    @Test("shutdown flushes what is queued, closes, reports the disconnect and never reconnects")
    func shutdown() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        let server = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        connection.onDisconnectPut(path: "presence", data: Node(.bool(false)))
        connection.shutdown()
        let sent = try await server.nextRequest()
        #expect(sent.name == "o", "queued frames are flushed before the close")
        #expect(await eventually { server.side.isClosedByClient })
        #expect(await eventually { delegate.disconnectCount == 1 })
        connection.put(path: "ignored", data: Node(.number(1)))
        connection.start()
        #expect(await transport.expectNoConnection(within: .milliseconds(100)))
    }

    @Test("The server's shutdown control stops reconnecting and is reported")
    func serverShutdown() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        server.side.sendMessage(ServerMessage.shutdown(reason: "database disabled"))
        #expect(await eventually { delegate.events.contains { if case .shutDown("database disabled") = $0 { true } else { false } } })
        #expect(await eventually { server.side.isClosedByClient })
        connection.goOnline()
        #expect(await transport.expectNoConnection(within: .milliseconds(100)))
    }

    @Test("The server's reset control reconnects at once")
    func serverReset() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(
            transport, delegate: RecordingDelegate(),
            configuration: fastConfiguration { $0.backoff = BackoffPolicy(minimumDelay: .seconds(20), maximumDelay: .seconds(20)) })
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        server.side.sendMessage(#"{"t":"c","d":{"t":"r","d":"other-host:9000"}}"#)
        _ = try await FakeServer.accept(transport, timeout: .seconds(5))
        #expect(server.side.isClosedByClient)
    }

    @Test("Malformed server input drops the connection and the client reconnects, never crashing")
    func malformedInput() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let inputs = [
            "{not json", #"{"t":"d","d":{"a":"d","b":{"d":1}}}"#, #"{"t":"x","d":{}}"#, "[1,2]",
            #"{"t":"d","d":{"r":"one","b":{"s":"ok"}}}"#, #"{"t":"d","d":{"a":"m","b":{"p":"a","d":5}}}"#,
        ]
        for input in inputs {
            let server = try await FakeServer.connect(transport)
            server.side.sendMessage(input)
            #expect(await eventually { server.side.isClosedByClient }, "\(input)")
        }
        // Something other than a handshake first.
        let early = try await FakeServer.accept(transport)
        early.side.sendMessage(ServerMessage.dataPush(path: "a", dataJSON: "1"))
        #expect(await eventually { early.side.isClosedByClient })
        let good = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        #expect(delegate.pushes.isEmpty)
        _ = good
    }

    @Test("A refused connect is retried with backoff")
    func refusedConnect() async throws {
        let transport = InMemoryTransport()
        transport.connectBehavior = .refuse
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        #expect(await eventually { transport.connectAttempts >= 3 })
        transport.connectBehavior = .accept
        _ = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
    }

    @Test("The endpoint's URL carries v, ns and ls, percent-encoded")
    func endpointURL() {
        let endpoint = ConnectionEndpoint(host: "db.example.com", port: 443, secure: true, namespace: "my ns&x")
        #expect(endpoint.webSocketURL(lastSessionID: nil) == "wss://db.example.com:443/.ws?v=5&ns=my%20ns%26x")
        let local = ConnectionEndpoint(host: "::1", port: 9000, secure: false, namespace: "test")
        #expect(local.webSocketURL(lastSessionID: "s1") == "ws://[::1]:9000/.ws?v=5&ns=test&ls=s1")
    }
}
