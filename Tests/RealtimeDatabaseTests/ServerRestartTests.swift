import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// A server restart or a dropped socket is survived: the client reconnects, listens again,
/// resends what was not acknowledged, and nothing is written twice.
@Suite("Server restarts")
struct ServerRestartTests {
    @Test("Reconnect, re-listen, resend", arguments: [false, true])
    func survivesARestart(killed: Bool) async throws {
        let server = try await ServerProcess.launch(backend: "sqlite")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("restart")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let messages = database.reference(withPath: "room/messages")
        let added = Recorder()
        messages.observe(.childAdded) { added.record("\($0.value ?? "nil")") }
        let connected = Recorder()
        database.reference(withPath: ".info/connected").observe(.value) { connected.record("\($0.value as? Bool ?? false)") }
        #expect(try await connected.waitFor("true"))
        try await messages.childByAutoId().setValue("before")
        #expect(try await added.waitFor("before"))

        // The server goes away (cleanly, or killed with SIGKILL: a dropped socket).
        await server.stop(hard: killed)
        #expect(try await waitUntil { connected.all.last == "false" })
        for index in 0..<5 { messages.childByAutoId().write("while down \(index)") }
        #expect(try await added.waitFor(count: 6), "local events while the server is down")

        try await server.restart()
        #expect(try await waitUntil(timeout: .seconds(20)) { connected.all.last == "true" })
        // Resent: exactly once each.
        #expect(try await waitUntil(timeout: .seconds(20)) {
            (try await server.read("room/messages", namespace: namespace) as? [String: Any])?.count == 6
        })
        // Re-listened: a write by someone else after the restart reaches the observer.
        try await server.write("room/messages/zzz", json: "\"after\"", namespace: namespace)
        #expect(try await added.waitFor("after"))
        // Pushes of the resent writes came before this one on the same socket; the barrier
        // delivers every event they raised.
        await database.settle()
        let stored = try await server.read("room/messages", namespace: namespace) as? [String: Any] ?? [:]
        #expect(stored.count == 7)
        #expect(added.all.filter { $0.hasPrefix("while down") }.count == 5, "no duplicate events: \(added.all)")
    }
}
