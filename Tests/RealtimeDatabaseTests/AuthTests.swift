import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import SyncClient
import SyncProtocol
import TestSupport
import Testing

/// The auth token is kept across restarts; while it is expired, writes wait until re-auth.
@Suite("Auth tokens")
struct AuthTests {
    @Test func theTokenIsKeptAcrossRestarts() async throws {
        let fake = FakeServer()
        fake.start { _, _ in (.ok, "\"\"") }
        defer { fake.stop() }
        let directory = Clients.temporaryDirectory("auth")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token = testJWT(expiresIn: 3600)

        let first = try Clients.make(url: "http://fake.invalid:1?ns=fake", backend: "sqlite", directory: directory)
        first.transport = fake.transport
        first.setAuthToken(token)
        try await first.reference(withPath: "a").setValue(1)
        first.shutdown()
        let sentBefore = fake.requests.filter { $0.action == "auth" }.count
        #expect(sentBefore >= 1)

        // A new process would start here: nothing sets the token, yet the client authenticates with it.
        let second = try Clients.make(url: "http://fake.invalid:1?ns=fake", backend: "sqlite", directory: directory)
        second.transport = fake.transport
        defer { second.shutdown() }
        try await second.reference(withPath: "b").setValue(2)
        let auths = fake.requests.filter { $0.action == "auth" }
        #expect(auths.count == sentBefore + 1)
        #expect(auths.last?.body["cred"] as? String == token)
        // Auth comes before the write on the new connection.
        let actions = fake.requests.map(\.action)
        #expect(actions.lastIndex(of: "auth")! < actions.lastIndex(of: "p")!)
    }

    @Test func writesWaitWhileTheTokenIsExpiredUntilReauth() async throws {
        let server = try await ServerProcess.launch(backend: "memory", arguments: TestTokens.serverArguments)
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("expired")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        database.setAuthToken(testJWT(expiresIn: -60))
        let ref = database.reference(withPath: "notes/n1")
        let seen = Recorder()
        ref.observe(.value) { seen.record("\($0.value ?? "nil")") }
        ref.write("written while expired")
        #expect(try await seen.waitFor("written while expired"), "the write shows locally at once")
        // The barrier: the connection has handled the write, and holds it unconnected (an
        // expired token is withheld, so it cannot connect until the app sets a fresh one).
        await database.settle()
        #expect(await database.repo.connection.isConnected == false, "no connection with an expired token")
        #expect(try await server.read("notes/n1", namespace: namespace) == nil, "no write may go out while the token is expired")

        database.setAuthToken(testJWT(expiresIn: 3600))
        #expect(try await waitUntil(timeout: .seconds(20)) {
            try await server.read("notes/n1", namespace: namespace) as? String == "written while expired"
        })
    }
}
