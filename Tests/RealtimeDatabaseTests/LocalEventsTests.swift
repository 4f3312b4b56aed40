import Foundation
@testable import RealtimeDatabase
import TestSupport
import Testing

/// Listener callbacks fire at once for local writes, online or offline; a write the server
/// rejects is reverted.
@Suite("Local events")
struct LocalEventsTests {
    @Test func localWritesRaiseEventsAtOnceWhileOffline() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=offline")
        database.goOffline()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "notes")
        let values = Recorder()
        let added = Recorder()
        ref.observe(.value) { values.record($0.json) }
        ref.observe(.childAdded) { added.record($0.key) }
        ref.write(["a": "x"])
        #expect(try await values.waitFor("{\"a\":\"x\"}"))
        ref.child("b").write("y")
        #expect(try await values.waitFor("{\"a\":\"x\",\"b\":\"y\"}"))
        #expect(added.all == ["a", "b"])
    }

    @Test func aWriteIsSeenLocallyBeforeTheServerAcknowledgesIt() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let database = try Clients.make(server, namespace: Clients.namespace("ack"))
        defer { database.shutdown() }
        let ref = database.reference(withPath: "status")
        let order = Recorder()
        ref.observe(.value) { snapshot in if snapshot.value as? String == "on" { order.record("event") } }
        ref.setValue("on") { error, _ in order.record(error == nil ? "ack" : "error \(error!)") }
        #expect(try await order.waitFor(count: 2))
        #expect(order.all == ["event", "ack"])
        #expect(try await server.read("status", namespace: database.namespaceForTests) as? String == "on")
    }

    @Test func aWriteTheServerRejectsIsReverted() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("reject")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let ref = database.reference(withPath: "big")
        let values = Recorder()
        ref.observe(.value) { values.record($0.exists() ? "data" : "null") }
        #expect(try await values.waitFor("null"))
        // Two 9 MB strings: each valid, together over the server's 16 MB write limit.
        let chunk = String(repeating: "x", count: 9 * 1024 * 1024)
        let failure = Recorder()
        ref.setValue(["a": chunk, "b": chunk]) { error, _ in
            failure.record((error as? DatabaseError)?.code.rawValue ?? "none")
        }
        #expect(try await failure.waitFor(count: 1, timeout: .seconds(30)))
        #expect(failure.all == ["too_big"])
        #expect(try await values.waitFor(count: 3))
        #expect(values.all == ["null", "data", "null"])
        #expect(try await server.read("big", namespace: namespace) == nil)
    }
}
