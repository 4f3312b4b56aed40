import CoreTree
import Foundation
import Testing
@testable import SyncClient
import SyncProtocol
import TestSupport

@Suite("Client: handshake and auth")
struct ClientHandshakeTests {
    @Test("The handshake gives the server time offset and session; stats go out once; ls is sent on reconnect")
    func handshake() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        // The local clock reads one fixed instant, so the offset is exactly the server's lead.
        let localNow: Int64 = 1_700_000_000_123
        let connection = startConnection(
            transport, delegate: delegate, configuration: fastConfiguration {
                $0.sdkStatsName = "sdk.swift.test"
                $0.wallClock = { localNow }
            })
        defer { connection.shutdown() }
        let serverNow = localNow + 5_000
        let server = try await FakeServer.connect(transport, sessionID: "abc", timestamp: serverNow)
        let stats = try await server.nextRequest()
        #expect(stats.name == "s")
        #expect(stats.text.contains(#""b":{"c":{"sdk.swift.test":1}}"#))
        #expect(await eventually { await connection.isConnected })
        guard case .connected(let offset, let session)? = delegate.events.first else {
            Issue.record("no connect event: \(delegate.events)")
            return
        }
        #expect(session == "abc")
        #expect(offset == 5_000, "offset = the handshake's ts - the local clock on arrival")
        #expect(transport.lastSessionIDs == [nil])

        server.side.drop()
        let second = try await FakeServer.connect(transport, sessionID: "def")
        #expect(second.side.lastSessionID == "abc")
        #expect(second.side.endpoint.webSocketURL(lastSessionID: "abc").hasSuffix("&ls=abc"))
        connection.put(path: "x", data: Node(.number(1)))
        let first = try await second.nextRequest()
        #expect(first.name == "p", "no stats on the second connection")
        #expect(delegate.connectCount == 2 && delegate.disconnectCount == 1)
    }

    @Test("A JWT is sent with auth before any listen or put, which wait for its ok")
    func authBeforeRequests() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let provider = ScriptedTokenProvider(token: "header.claims.signature")
        let connection = startConnection(transport, delegate: delegate, provider: provider)
        defer { connection.shutdown() }
        connection.put(path: "a", data: Node(.number(1)))
        connection.listen(
            ListenRequest(path: "b", query: .empty, identifier: "default", tag: nil), hash: { "" }, onComplete: { _ in })
        let server = try await FakeServer.connect(transport)
        let auth = try await server.nextRequest()
        guard case .auth(let credential, _, let isGAuth) = auth.action else {
            Issue.record("expected auth first, got \(auth.text)")
            return
        }
        #expect(credential == "header.claims.signature" && !isGAuth)
        #expect(try await server.expectSilence(), "nothing before the auth ok")
        #expect(await connection.isConnected == false)
        server.reply(auth)
        let restored = try await server.nextRequests(2)
        #expect(restored.map(\.name) == ["q", "p"], "listens first, then puts")
        #expect(await eventually { delegate.authReports == [true] })
        #expect(await connection.isConnected)
        #expect(provider.calls == [false])
    }

    @Test("A token that is not JWT-shaped (the emulator's owner) is sent with gauth")
    func gauth() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate(), provider: ScriptedTokenProvider(token: "owner"))
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let auth = try await server.nextRequest()
        guard case .auth(let credential, _, let isGAuth) = auth.action else {
            Issue.record("expected gauth, got \(auth.text)")
            return
        }
        #expect(credential == "owner" && isGAuth && auth.name == "gauth")
        #expect(OutgoingMessage.isJWT("a.b.") && !OutgoingMessage.isJWT("a.b") && !OutgoingMessage.isJWT("a.b.c.d"))
    }

    @Test("An auth failure reports unauthenticated, closes, and reconnects with a forced token refresh")
    func authFailure() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let provider = ScriptedTokenProvider(token: "x.y.z")
        let connection = startConnection(transport, delegate: delegate, provider: provider)
        defer { connection.shutdown() }
        connection.put(path: "kept", data: Node(.string("v")))
        let server = try await FakeServer.connect(transport)
        let auth = try await server.nextRequest()
        provider.setToken("new.token.here")
        server.side.sendMessage(ServerMessage.reply(auth.number, status: .invalidToken, message: "bad token"))
        #expect(await eventually { server.side.isClosedByClient })
        #expect(delegate.authReports == [false])

        let second = try await FakeServer.connect(transport)
        let reauth = try await second.nextRequest()
        guard case .auth(let credential, _, _) = reauth.action else {
            Issue.record("expected auth, got \(reauth.text)")
            return
        }
        #expect(credential == "new.token.here")
        #expect(provider.calls == [false, true], "the reconnect forces a refresh")
        second.reply(reauth)
        let put = try await second.nextRequest()
        #expect(putFields(put)?.path == "kept", "the queued put survives the auth failure")
        #expect(await eventually { delegate.authReports == [false, true] })
    }

    @Test("While the provider throws, nothing connects and writes stay queued; then they go out")
    func providerThrows() async throws {
        let transport = InMemoryTransport()
        let provider = ScriptedTokenProvider(token: "a.b.c", failures: 3)
        let connection = startConnection(transport, delegate: RecordingDelegate(), provider: provider)
        defer { connection.shutdown() }
        connection.put(path: "one", data: Node(.number(1)))
        connection.put(path: "two", data: Node(.number(2)))
        #expect(await eventually { provider.calls.count >= 3 })
        #expect(transport.connectAttempts <= 1)
        let server = try await FakeServer.connect(transport)
        #expect(provider.calls.count == 4)
        #expect(transport.connectAttempts == 1, "no socket was opened while there was no token")
        let auth = try await server.nextRequest()
        #expect(auth.name == "auth")
        server.reply(auth)
        let puts = try await server.nextRequests(2)
        #expect(puts.compactMap { putFields($0)?.path } == ["one", "two"])
    }

    @Test("refreshAuthToken re-authenticates a live connection; an ac push closes and forces a refresh")
    func refreshAndRevoke() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let provider = ScriptedTokenProvider(token: "t.o.k1")
        let connection = startConnection(transport, delegate: delegate, provider: provider)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        server.reply(try await server.nextRequest())
        #expect(await eventually { await connection.isConnected })

        provider.setToken("t.o.k2")
        connection.refreshAuthToken()
        let reauth = try await server.nextRequest()
        guard case .auth(let credential, _, _) = reauth.action else {
            Issue.record("expected auth, got \(reauth.text)")
            return
        }
        #expect(credential == "t.o.k2")
        #expect(provider.calls == [false, true])
        server.reply(reauth)
        #expect(await eventually { delegate.authReports == [true, true] })

        server.side.sendMessage(ServerMessage.authRevoked(status: .expiredToken, reason: "expired"))
        #expect(await eventually { server.side.isClosedByClient })
        let second = try await FakeServer.connect(transport)
        _ = try await second.nextRequest()
        #expect(provider.calls == [false, true, true])
        #expect(delegate.authReports == [true, true, false])
    }

    @Test("refreshAuthToken while waiting out the backoff for a token connects at once, forcing a refresh")
    func refreshWhileWaiting() async throws {
        let transport = InMemoryTransport()
        let provider = ScriptedTokenProvider(token: "a.b.c", failures: 1)
        let connection = startConnection(
            transport, delegate: RecordingDelegate(), provider: provider,
            configuration: fastConfiguration { $0.backoff = BackoffPolicy(minimumDelay: .seconds(30), maximumDelay: .seconds(30)) })
        defer { connection.shutdown() }
        #expect(await eventually { provider.calls.count == 1 })
        #expect(await transport.expectNoConnection(within: .milliseconds(100)), "backing off for 9 s or more")
        connection.refreshAuthToken()
        let server = try await FakeServer.connect(transport)
        #expect(provider.calls == [false, true])
        #expect(try await server.nextRequest().name == "auth")
    }

    @Test("A connect that never answers times out and is retried")
    func connectTimeout() async throws {
        let clock = ManualClock()
        let configuration = fastConfiguration {
            $0.connectTimeout = .seconds(30)
            $0.backoff = BackoffPolicy(minimumDelay: .seconds(1), maximumDelay: .seconds(1))
            $0.clock = ConnectionClock(clock)
        }
        let transport = InMemoryTransport()
        transport.connectBehavior = .hang
        let connection = startConnection(transport, delegate: RecordingDelegate(), configuration: configuration)
        defer { connection.shutdown() }
        #expect(await eventually { transport.connectAttempts == 1 })
        await clock.waitForSleepers(atLeast: 1)
        clock.advance(by: .seconds(29))
        #expect(await transport.expectNoConnection(within: .milliseconds(100)), "not before the timeout")
        clock.advance(by: .seconds(1))
        // Timed out: the retry waits out the backoff (up to 1 s), then connects again.
        await clock.waitForSleepers(atLeast: 1)
        transport.connectBehavior = .accept
        clock.advance(by: .seconds(1))
        _ = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        #expect(transport.connectAttempts == 2)

        // A server that opens but never sends the handshake times out too.
        let silentClock = ManualClock()
        let silent = InMemoryTransport()
        let other = startConnection(silent, delegate: RecordingDelegate(), configuration: fastConfiguration {
            $0.connectTimeout = .seconds(30)
            $0.clock = ConnectionClock(silentClock)
        })
        defer { other.shutdown() }
        let mute = try await FakeServer.accept(silent)
        await silentClock.waitForSleepers(atLeast: 1)
        #expect(!mute.side.isClosedByClient)
        silentClock.advance(by: .seconds(30))
        #expect(await eventually { mute.side.isClosedByClient })
        await silentClock.waitForSleepers(atLeast: 1)
        silentClock.advance(by: .seconds(1))
        _ = try await FakeServer.accept(silent)
    }
}
