import CoreTree
import Foundation
@testable import RealtimeDatabase
import TestSupport
import Testing

/// Beyond Firebase: the app can see what the server has not acknowledged yet, as a number
/// (`pendingWriteCount`), a sequence of numbers (`pendingWriteCounts`) and `/.info/pendingWrites`,
/// including writes restored from disk at start.
@Suite("pending writes you can see")
struct PendingWritesTests {
    @Test func theCountFollowsQueuedAndAcknowledgedWritesAndSurvivesARestart() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("pending")
        let directory = Clients.temporaryDirectory("pending")
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        database.goOffline()
        #expect(database.pendingWriteCount == 0)
        let seen = Recorder()
        let info = database.reference(withPath: ".info/pendingWrites").observe(.value) { snapshot in
            seen.record("\(snapshot.value ?? "nil")")
        }
        queueLocally(database.reference(withPath: "a"), 1)
        queueLocally(database.reference(withPath: "b"), 2)
        updateLocally(database.reference(withPath: "c"), ["x": 1, "y": 2])
        #expect(database.pendingWriteCount == 3)
        #expect(try await waitUntil { seen.all.last == "3" }, "/.info/pendingWrites said \(seen.all)")
        database.reference(withPath: ".info/pendingWrites").removeObserver(withHandle: info)
        database.shutdown()

        // Restored from disk: the count is there before any server contact, and falls to 0 once
        // the server has them all.
        let reopened = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        reopened.goOffline()
        defer { reopened.shutdown() }
        #expect(reopened.pendingWriteCount == 3)
        var counts = reopened.pendingWriteCounts.makeAsyncIterator()
        #expect(await counts.next() == 3)
        reopened.goOnline()
        var last = 3
        while last != 0, let next = await counts.next() { last = next }
        #expect(last == 0)
        #expect(reopened.pendingWriteCount == 0)
        #expect(try await server.read("c/y", namespace: namespace) as? Int == 2)
    }

    @Test func theSequenceEndsWhenTheDatabaseShutsDown() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=ends")
        database.goOffline()
        let counts = database.pendingWriteCounts
        database.shutdown()
        var received: [Int] = []
        for await count in counts { received.append(count) }
        #expect(received.count <= 1)
    }
}

/// `setValue` / `updateChildValues` from synchronous code: queued and applied locally at once.
private func queueLocally(_ ref: DatabaseReference, _ value: Any) { ref.setValue(value) }
private func updateLocally(_ ref: DatabaseReference, _ values: [String: Any]) { ref.updateChildValues(values) }
