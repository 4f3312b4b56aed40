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

    /// Caches `node` at `path` as a complete query, then leaves it inactive (as a finished read does).
    private func cacheIdle(_ manager: PersistenceManager, _ path: TreePath, _ node: Node) {
        let query = QuerySpec.default(at: path)
        manager.setQueryActive(query)
        manager.updateServerCache(query: query, node: node)
        manager.setQueryComplete(query)
        manager.setQueryInactive(query)
    }

    private func leaf(_ text: String) -> Node { Node(.string(text)) }

    @Test("purgeCache(at:) removes the data and queries at and below a location, keeping what listens, pins and writes need")
    func purgeAtALocation() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        cacheIdle(manager, "/rooms/a", Node(children: ["m": leaf("a")]))
        cacheIdle(manager, "/rooms/b", Node(children: ["m": leaf("b")]))
        cacheIdle(manager, "/other", leaf("o"))
        let active = QuerySpec.default(at: "/rooms/c")
        manager.setQueryActive(active)
        manager.updateServerCache(query: active, node: Node(children: ["m": leaf("c")]))
        manager.setQueryComplete(active)
        cacheIdle(manager, "/rooms/p", leaf("p"))
        try manager.setQueryPinned(.default(at: "/rooms/p"), true)
        try manager.saveUserOverwrite(path: "/rooms/q", node: leaf("queued"), writeId: 1)
        manager.applyUserWriteToServerCache(path: "/rooms/q", node: leaf("queued"))
        let before = manager.cacheSizeBytes

        try manager.purgeCache(at: "/rooms")
        #expect(manager.cacheSizeBytes < before)
        #expect(try engine.serverCache(at: "/rooms/a").isEmpty)
        #expect(try engine.serverCache(at: "/rooms/b").isEmpty)
        #expect(!manager.serverCache(for: .default(at: "/rooms/a")).complete)
        #expect(!manager.trackedQueries.contains { $0.query.path == "/rooms/a" || $0.query.path == "/rooms/b" })
        #expect(try engine.serverCache(at: "/rooms/c/m") == leaf("c"), "an active listen's data stays")
        #expect(manager.serverCache(for: active).complete)
        #expect(try engine.serverCache(at: "/rooms/p") == leaf("p"), "a pinned location's data stays")
        #expect(try engine.serverCache(at: "/rooms/q") == leaf("queued"), "a queued write's data stays")
        #expect(try manager.userWrites().count == 1)
        #expect(try engine.serverCache(at: "/other") == leaf("o"), "data outside the location stays")
        #expect(manager.serverCache(for: .default(at: "/other")).complete)
        #expect(manager.lastCacheError == nil)
    }

    @Test("purgeCache(at:) below a complete cached location keeps the rest of it complete, also after a reopen")
    func purgeBelowACompleteQuery() throws {
        let store = MemoryStore()
        let engine = try StorageEngine(store: store)
        let manager = try PersistenceManager(engine: engine)
        let rooms = Node(children: [
            "a": Node(children: ["m": leaf("a"), "n": Node(children: ["x": leaf("ax"), "y": leaf("ay")])]),
            "b": Node(children: ["m": leaf("b")]),
        ])
        cacheIdle(manager, "/rooms", rooms)
        cacheIdle(manager, "/rooms/a/n/x", leaf("ax"))

        try manager.purgeCache(at: "/rooms/a/n/x")
        for check in [manager, try PersistenceManager(engine: engine)] {
            #expect(!check.serverCache(for: .default(at: "/rooms")).complete, "the location above is no longer complete")
            #expect(!check.serverCache(for: .default(at: "/rooms/a/n/x")).complete)
            #expect(try engine.serverCache(at: "/rooms/a/n/x").isEmpty)
            let b = check.serverCache(for: .default(at: "/rooms/b"))
            #expect(b.complete && b.node == Node(children: ["m": leaf("b")]))
            let am = check.serverCache(for: .default(at: "/rooms/a/m"))
            #expect(am.complete && am.node == leaf("a"))
            let y = check.serverCache(for: .default(at: "/rooms/a/n/y"))
            #expect(y.complete && y.node == leaf("ay"))
            #expect(!check.trackedQueries.contains { $0.query.path == "/rooms" || $0.query.path == "/rooms/a/n/x" })
            #expect(Set(check.trackedQueries.map(\.id)).count == check.trackedQueries.count, "each new query has an id of its own")
        }
    }

    @Test("purgeCache(at:) removes nothing a listen or a write above the location needs")
    func purgeUnderAnActiveQueryKeepsEverything() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        let rooms = QuerySpec.default(at: "/rooms")
        manager.setQueryActive(rooms)
        manager.updateServerCache(query: rooms, node: Node(children: ["a": leaf("a")]))
        manager.setQueryComplete(rooms)
        try manager.purgeCache(at: "/rooms/a")
        #expect(try engine.serverCache(at: "/rooms/a") == leaf("a"))
        #expect(manager.serverCache(for: rooms).complete)

        manager.setQueryInactive(rooms)
        try manager.saveUserOverwrite(path: "/rooms", node: Node(children: ["a": leaf("mine")]), writeId: 7)
        try manager.purgeCache(at: "/rooms/a")
        #expect(try engine.serverCache(at: "/rooms/a") == leaf("a"), "a pending write above the location needs it")
    }

    @Test("a filtered query's cache is its tracked keys once complete")
    func filteredQueryServesItsKeys() throws {
        let engine = try StorageEngine(store: MemoryStore())
        let manager = try PersistenceManager(engine: engine)
        let top = QuerySpec(path: "/scores", params: try QueryParams().orderedBy(.value).limitedToLast(2))
        manager.updateServerCache(query: .default(at: "/scores/a"), node: Node(.number(1)))
        manager.setQueryActive(top)
        manager.updateServerCache(query: top, node: Node(children: ["b": Node(.number(5)), "c": Node(.number(9))]))
        // The server's data for the query is its whole result: complete without the listen's answer.
        let cached = manager.serverCache(for: top)
        #expect(cached.complete)
        #expect(cached.node == Node(children: ["b": Node(.number(5)), "c": Node(.number(9))]))
        // The default query at the location is not complete: only some children are known.
        #expect(!manager.serverCache(for: .default(at: "/scores")).complete)
        #expect(try engine.serverCache(at: "/scores").childCount == 3)
    }
}
