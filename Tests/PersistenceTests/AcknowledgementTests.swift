import CoreTree
import Persistence
import QueryEngine
import Testing

/// An acknowledged set reaches the store as one commit: the cached data, the tracked query that
/// now covers it and the queue record's removal, never one without the others.
@Suite("acknowledged writes")
struct AcknowledgementTests {
    @Test("the cache update, the tracked query and the queue removal are one store write, and a restart sees all three")
    func oneCommit() throws {
        let memory = MemoryStore()
        let counting = CountingStore(memory)
        let manager = try PersistenceManager(engine: try StorageEngine(store: counting))
        let value = Node(children: ["n": Node(.number(7))])
        try manager.saveUserOverwrite(path: "/items/a", node: value, writeId: 1)
        try manager.saveUserOverwrite(path: "/items/b", node: Node(.string("b")), writeId: 2)
        let before = counting.writeCount
        manager.acknowledgeUserOverwrite(path: "/items/a", node: value, removingWrite: 1)
        #expect(counting.writeCount == before + 1)
        #expect(manager.lastCacheError == nil)

        let reopened = try PersistenceManager(engine: try StorageEngine(store: memory))
        #expect(try reopened.userWrites().map(\.writeId) == [2], "the acknowledged write left the queue")
        let cached = reopened.serverCache(for: .default(at: "/items/a"))
        #expect(cached.node == value && cached.complete, "its data is cached and known complete")
        #expect(!reopened.serverCache(for: .default(at: "/items/b")).complete)
    }

    @Test("a write kept in the queue (persist off) is cached and stays queued; a location with an active listener only leaves the queue")
    func variants() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        try manager.saveUserOverwrite(path: "/a", node: Node(.number(1)), writeId: 1)
        manager.acknowledgeUserOverwrite(path: "/a", node: Node(.number(1)), removingWrite: nil)
        #expect(try manager.userWrites().map(\.writeId) == [1])
        #expect(manager.serverCache(for: .default(at: "/a")).node == Node(.number(1)))

        let listened = QuerySpec.default(at: "/live")
        manager.setQueryActive(listened)
        try manager.saveUserOverwrite(path: "/live/x", node: Node(.number(2)), writeId: 2)
        manager.acknowledgeUserOverwrite(path: "/live/x", node: Node(.number(2)), removingWrite: 2)
        #expect(try manager.userWrites().map(\.writeId) == [1])
        #expect(try engine.serverCache(at: "/live/x").isEmpty, "the listener's server data fills it, not the ack")
        #expect(manager.lastCacheError == nil)
    }
}
