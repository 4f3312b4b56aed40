import CoreTree
import Foundation
import Persistence
import QueryEngine
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// keepSynced downloads a location and keeps it current without listeners; the cache stays
/// within its budget by LRU pruning, and kept data is never pruned.
@Suite("keepSynced and the cache budget")
struct KeepSyncedTests {
    @Test func keepSyncedKeepsALocationCurrentWithoutListeners() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("kept")
        let directory = Clients.temporaryDirectory("kept")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("scores", json: #"{"a":1,"b":2}"#, namespace: namespace)

        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        let scoresRef = database.reference(withPath: "scores")
        scoresRef.keepSynced(true)
        let repo = database.repo
        func cached() -> String { repo.perform { repo.syncTree.calcCompleteEventCache(path: "scores").jsonString(format: .plain) } }
        #expect(try await waitUntil { cached() == #"{"a":1,"b":2}"# }, "keepSynced did not download the data: \(cached())")
        try await server.write("scores/c", json: "3", namespace: namespace)
        #expect(try await waitUntil { cached() == #"{"a":1,"b":2,"c":3}"# }, "keepSynced did not keep the data current: \(cached())")

        scoresRef.keepSynced(false)
        // A read sent after the unlisten is answered after the server handled it (one ordered
        // connection), and a read after the next write is answered after any push it caused.
        _ = try await database.reference(withPath: "probe").getData()
        try await server.write("scores/d", json: "4", namespace: namespace)
        _ = try await database.reference(withPath: "probe").getData()
        database.shutdown()

        // Offline, the disk holds what was synced while kept, and nothing after.
        let reopened = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        reopened.goOffline()
        defer { reopened.shutdown() }
        let snapshot = try await reopened.reference(withPath: "scores").getData()
        #expect(snapshot.json == #"{"a":1,"b":2,"c":3}"#)
    }

    @Test func theCacheStaysWithinItsBudgetAndKeptDataIsNeverPruned() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("budget")
        let directory = Clients.temporaryDirectory("budget")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let blob = String(repeating: "b", count: 1_000)
        func location(kilobytes: Int) -> String {
            "{" + (0..<kilobytes).map { "\"k\($0)\":\"\(blob)\"" }.joined(separator: ",") + "}"
        }
        try await server.write("pinned", json: location(kilobytes: 300), namespace: namespace)
        for index in 0..<8 { try await server.write("rooms/r\(index)", json: location(kilobytes: 200), namespace: namespace) }

        let budget = CachePolicy.minimumBytes  // 1 MiB
        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory, cacheSizeBytes: UInt(budget))
        database.reference(withPath: "pinned").keepSynced(true)
        // Visit each room in turn: listen until its data arrives, then stop listening.
        for index in 0..<8 {
            let snapshot = try await database.reference(withPath: "rooms/r\(index)").singleEvent(of: .value)
            #expect(snapshot.childrenCount == 200)
        }
        _ = try await database.reference(withPath: "pinned").singleEvent(of: .value)
        // A value event comes with the server's data, before the listen's ok marks the query
        // complete. A read sent now is answered after those oks (one ordered connection), and the
        // barrier then lets the client record them before it shuts down.
        _ = try await database.reference(withPath: "probe").getData()
        await database.settle()
        let repo = database.repo
        #expect(repo.perform { repo.persistence!.cacheSizeBytes } > budget, "the test should overfill the cache")
        database.shutdown()

        // Pruning runs at open (and every 1,000 cache updates).
        let reopened = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory, cacheSizeBytes: UInt(budget))
        reopened.goOffline()
        defer { reopened.shutdown() }
        let reopenedRepo = reopened.repo
        let size = reopenedRepo.perform { reopenedRepo.persistence!.cacheSizeBytes }
        #expect(size <= budget, "cache is \(size) bytes, over its \(budget)-byte budget")
        let pinned = try await reopened.reference(withPath: "pinned").getData()
        #expect(pinned.childrenCount == 300, "kept data was pruned")
        // Least recently used first: the first room is gone, the last one is still there.
        await #expect(throws: DatabaseError.self) { try await reopened.reference(withPath: "rooms/r0").getData() }
        let newest = try await reopened.reference(withPath: "rooms/r7").getData()
        #expect(newest.childrenCount == 200)
    }
}
