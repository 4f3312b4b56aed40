import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// Beyond Firebase: `Database.purgeCache(at:)` drops one location's cached data that nothing
/// needs, with the guarantees of `purgeCache()` (listened, pinned and queued data stay), on every
/// persistence backend, against a real server, and it holds after a restart.
@Suite("purgeCache(at:)")
struct PurgeLocationTests {
    static let blob = String(repeating: "x", count: 2_000)

    /// Whether the cache alone answers for `path`, and with what.
    private func cached(_ database: Database, _ path: String) async throws -> Any? {
        do {
            return try await database.reference(withPath: path).getData(source: .cache).value
        } catch let error as DatabaseError where error.code == .notCached {
            return nil
        }
    }

    @Test("drops a location's idle data and keeps what listens, pins and queued writes need", arguments: ["sqlite", "lmdb", "leveldb"])
    func purgesOneLocation(backend: String) async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("purge-at")
        let directory = Clients.temporaryDirectory("purge-at-\(backend)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let blob = Self.blob
        for room in ["a", "b", "pinned", "active"] {
            try await server.write("rooms/\(room)", json: #"{"text":"\#(blob)"}"#, namespace: namespace)
        }
        try await server.write("other", json: #"{"text":"\#(blob)"}"#, namespace: namespace)

        let database = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        defer { database.shutdown() }
        #expect(database.persistenceError == nil)
        for path in ["rooms/a", "rooms/b", "other"] { _ = try await database.reference(withPath: path).singleEvent(of: .value) }
        database.reference(withPath: "rooms/pinned").keepSynced(true)
        _ = try await database.reference(withPath: "rooms/pinned").singleEvent(of: .value)
        let active = database.reference(withPath: "rooms/active").observe(.value) { _ in }
        _ = try await database.reference(withPath: "rooms/active").singleEvent(of: .value)
        // Replies come in order: once this read is answered, every listen above is complete.
        _ = try await database.reference(withPath: "barrier").getData()
        database.goOffline()
        database.reference(withPath: "rooms/queued").write(["text": blob])
        for path in ["rooms/a", "rooms/b", "rooms/pinned", "rooms/active", "rooms/queued", "other"] {
            #expect(try await cached(database, path + "/text") as? String == blob, "\(path) is cached before the purge")
        }
        let full = database.cacheSizeBytes

        try database.purgeCache(at: "rooms")
        #expect(database.cacheSizeBytes < full - 3 * blob.count / 2, "the purge freed only \(full - database.cacheSizeBytes) bytes")
        #expect(try await cached(database, "rooms/a") == nil)
        #expect(try await cached(database, "rooms/b") == nil)
        #expect(try await cached(database, "rooms/pinned/text") as? String == blob, "a pinned location stays")
        #expect(try await cached(database, "rooms/active/text") as? String == blob, "a listened location stays")
        #expect(try await cached(database, "rooms/queued/text") as? String == blob, "a queued write stays")
        #expect(try await cached(database, "other/text") as? String == blob, "data outside the location stays")
        #expect(database.pendingWriteCount == 1)
        database.reference(withPath: "rooms/active").removeObserver(withHandle: active)
        database.shutdown()

        // On disk, after a restart, offline.
        let reopened = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        reopened.goOffline()
        defer { reopened.shutdown() }
        #expect(try await cached(reopened, "rooms/a") == nil)
        #expect(try await cached(reopened, "rooms/b") == nil)
        #expect(try await cached(reopened, "rooms/pinned/text") as? String == blob)
        #expect(try await cached(reopened, "rooms/active/text") as? String == blob)
        #expect(try await cached(reopened, "rooms/queued/text") as? String == blob)
        #expect(try await cached(reopened, "other/text") as? String == blob)

        // Online again, the purged data comes back from the server, and the queued write goes.
        reopened.goOnline()
        try await Clients.waitUntilConnected(reopened)
        #expect(try await reopened.reference(withPath: "rooms/a/text").getData(source: .server).value as? String == blob)
        try await reopened.waitForPendingWrites()
        #expect(try await server.read("rooms/queued/text", namespace: namespace) as? String == blob)
    }

    @Test("below a location cached whole, keeps the rest of it cached", arguments: ["sqlite", "lmdb", "leveldb"])
    func purgesBelowALocationCachedWhole(backend: String) async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("purge-below")
        let directory = Clients.temporaryDirectory("purge-below-\(backend)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("rooms", json: #"{"a":{"m1":"hi","m2":"there"},"b":{"m1":"yo"}}"#, namespace: namespace)

        let database = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        defer { database.shutdown() }
        _ = try await database.reference(withPath: "rooms").singleEvent(of: .value)
        _ = try await database.reference(withPath: "barrier").getData()
        #expect((try await cached(database, "rooms") as? [String: Any])?.count == 2)

        // Online: the purge asks nothing of the server, and changes nothing there.
        try database.purgeCache(at: "rooms/a/m1")
        #expect(try await cached(database, "rooms/a/m1") == nil)
        #expect(try await cached(database, "rooms") == nil, "rooms is no longer cached whole")
        #expect(try await cached(database, "rooms/a/m2") as? String == "there")
        #expect(try await cached(database, "rooms/b") as? [String: String] == ["m1": "yo"])
        #expect(try await server.read("rooms/a/m1", namespace: namespace) as? String == "hi")
        database.shutdown()

        let reopened = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        reopened.goOffline()
        defer { reopened.shutdown() }
        #expect(try await cached(reopened, "rooms/a/m1") == nil)
        #expect(try await cached(reopened, "rooms/a/m2") as? String == "there")
        #expect(try await cached(reopened, "rooms/b") as? [String: String] == ["m1": "yo"])
    }

    @Test func refusesInvalidAndInfoPathsAndDoesNothingWithoutPersistence() throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=purge-args")
        database.goOffline()
        defer { database.shutdown() }
        #expect(throws: DatabaseError.self) { try database.purgeCache(at: "a.b") }
        let info = #expect(throws: DatabaseError.self) { try database.purgeCache(at: ".info/connected") }
        #expect(info?.code == .invalidArgument)
        try database.purgeCache(at: "rooms")
        #expect(database.cacheSizeBytes == 0)
    }
}
