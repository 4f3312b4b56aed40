import CoreTree
import Foundation
import Persistence
import QueryEngine
@testable import RealtimeDatabase
import TestSupport
import Testing

/// Beyond Firebase: the app sees and controls its cache (`cacheSizeBytes`, `purgeCache()`), and a
/// second process on the same persistence directory gets a clear error, not a crash.
@Suite("cache control")
struct CacheControlTests {
    @Test func purgeCacheDropsIdleDataAndKeepsPinsListensAndQueuedWrites() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("purge")
        let directory = Clients.temporaryDirectory("purge")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let blob = String(repeating: "x", count: 2_000)
        for name in ["idle", "pinned", "active"] {
            try await server.write(name, json: #"{"a":"\#(blob)","b":"\#(blob)"}"#, namespace: namespace)
        }

        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        defer { database.shutdown() }
        #expect(database.persistenceError == nil)
        #expect(database.cacheSizeBytes == 0)
        _ = try await database.reference(withPath: "idle").singleEvent(of: .value)
        database.reference(withPath: "pinned").keepSynced(true)
        _ = try await database.reference(withPath: "pinned").singleEvent(of: .value)
        let active = database.reference(withPath: "active").observe(.value) { _ in }
        _ = try await database.reference(withPath: "active").singleEvent(of: .value)
        // Replies come in order: once this read is answered, every listen above is complete.
        _ = try await database.reference(withPath: "barrier").getData()
        database.goOffline()
        queueLocally(database.reference(withPath: "queued"), ["note": blob])
        let full = database.cacheSizeBytes
        #expect(full > 6 * blob.count, "the cache holds \(full) bytes")

        try database.purgeCache()
        let purged = database.cacheSizeBytes
        #expect(purged < full - 3 * blob.count / 2, "the purge freed only \(full - purged) bytes")
        let repo = database.repo
        #expect(try repo.perform { try repo.persistence!.userWrites().count } == 1, "the purge touched the queued write")
        database.reference(withPath: "active").removeObserver(withHandle: active)
        database.shutdown()

        // What is on disk now, offline.
        let reopened = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        reopened.goOffline()
        defer { reopened.shutdown() }
        await #expect(throws: DatabaseError.self) { try await reopened.reference(withPath: "idle").getData() }
        #expect(try await reopened.reference(withPath: "pinned").getData().childrenCount == 2)
        #expect(try await reopened.reference(withPath: "active").getData().childrenCount == 2)
        #expect(try await reopened.reference(withPath: "queued/note").getData().value as? String == blob)
    }

    @Test func aSecondProcessOnTheSameDirectoryGetsAnErrorNamingTheFirst() async throws {
        let directory = Clients.temporaryDirectory("in-use")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = "http://127.0.0.1:9?ns=inuse"
        let holder = try ChildProcess(
            executable: try builtExecutable(named: "rtdb-client-probe"),
            arguments: ["write-offline", "--url", url, "--backend", "sqlite", "--directory", directory, "--count", "1"])
        try await holder.waitForOutput("wrote 0", timeout: .seconds(30))

        let database = try Clients.make(url: url, backend: "sqlite", directory: directory)
        database.goOffline()
        defer { database.shutdown() }
        let error = try #require(database.persistenceError)
        #expect(error.code == .persistenceInUse)
        #expect(error.message.contains("process \(holder.process.processIdentifier)"), "\(error.message)")
        // The instance goes on without persistence.
        #expect(database.cacheSizeBytes == 0)
        queueLocally(database.reference(withPath: "local"), 1)
        #expect(try await database.reference(withPath: "local").getData().value as? Int == 1)
        await holder.stop(signal: SIGKILL)
    }
}

/// `setValue` from synchronous code: queued and applied locally at once (inside an `async`
/// function a bare `setValue` is the form that waits for the server).
private func queueLocally(_ ref: DatabaseReference, _ value: Any) {
    ref.setValue(value)
}
