import CoreTree
import Persistence
import QueryEngine
import Testing

@Suite("purging the cache")
struct PurgeTests {
    @Test("purgeCache removes inactive unpinned data and keeps active and pinned data")
    func purgeKeepsActiveAndPinned() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        let active = QuerySpec.default(at: "/active")
        let pinned = QuerySpec.default(at: "/pinned")
        let idle = QuerySpec.default(at: "/idle")
        for query in [active, pinned, idle] {
            manager.setQueryActive(query)
            manager.updateServerCache(query: query, node: Node(children: ["v": Node(.string(query.path.wireForm))]))
            manager.setQueryComplete(query)
        }
        manager.setQueryInactive(pinned)
        manager.setQueryInactive(idle)
        try manager.setQueryPinned(pinned, true)
        let before = manager.cacheSizeBytes
        try manager.purgeCache()
        #expect(manager.cacheSizeBytes < before)
        #expect(try engine.serverCache(at: "/active/v") == Node(.string("/active")))
        #expect(try engine.serverCache(at: "/pinned/v") == Node(.string("/pinned")))
        #expect(try engine.serverCache(at: "/idle").isEmpty)
        #expect(manager.serverCache(for: active).complete)
        #expect(!manager.serverCache(for: idle).complete)
        #expect(manager.lastCacheError == nil)
    }

    @Test("a filtered query's cache is its tracked keys once complete")
    func filteredQueryServesItsKeys() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        let top = QuerySpec(path: "/scores", params: try QueryParams().orderedBy(.value).limitedToLast(2))
        manager.updateServerCache(query: .default(at: "/scores/a"), node: Node(.number(1)))
        manager.setQueryActive(top)
        manager.updateServerCache(query: top, node: Node(children: ["b": Node(.number(5)), "c": Node(.number(9))]))
        #expect(!manager.serverCache(for: top).complete)
        manager.setQueryComplete(top)
        let cached = manager.serverCache(for: top)
        #expect(cached.complete)
        #expect(cached.node == Node(children: ["b": Node(.number(5)), "c": Node(.number(9))]))
        // The default query at the location is not complete: only some children are known.
        #expect(!manager.serverCache(for: .default(at: "/scores")).complete)
        #expect(try engine.serverCache(at: "/scores").childCount == 3)
    }
}
