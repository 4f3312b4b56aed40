import Foundation
@testable import RealtimeDatabase
import TestSupport
import Testing

/// A client against a real rtdb-server process: writes reach the server, server data reaches observers.
@Suite("Online", .serialized)
struct OnlineTests {
    @Test func writesReachTheServerAndServerWritesReachObservers() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("online")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let ref = database.reference(withPath: "rooms/lobby")

        try await ref.setValue(["title": "Lobby", "count": 1])
        let stored = try await server.read("rooms/lobby", namespace: namespace) as? [String: Any]
        #expect(stored?["title"] as? String == "Lobby")
        #expect(stored?["count"] as? Int == 1)

        let seen = Recorder()
        ref.child("count").observe(.value) { seen.record("\($0.value ?? "nil")") }
        #expect(try await seen.waitFor("1"))
        try await server.write("rooms/lobby/count", json: "2", namespace: namespace)
        #expect(try await seen.waitFor("2"))

        let snapshot = try await ref.getData()
        #expect(snapshot.childSnapshot(forPath: "count").value as? Int == 2)
        #expect(snapshot.key == "lobby")
    }
}
