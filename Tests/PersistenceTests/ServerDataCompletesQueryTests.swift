import CoreTree
import Persistence
import QueryEngine
import Testing

/// The server's data for a listen makes its tracked query complete, as Firebase's
/// `updateServerCache` does: a one-time read removes its listen as soon as the data arrives, and
/// the listen's answer, which follows the data, is then dropped, so it cannot be what records it.
@Suite("server data completes a tracked query")
struct ServerDataCompletesQueryTests {
    @Test("a listen removed before its answer leaves its data cached complete")
    func dataBeforeTheAnswer() throws {
        let manager = try PersistenceManager(engine: try StorageEngine(store: MemoryStore()))
        let query = QuerySpec.default(at: "/other")
        manager.setQueryActive(query)
        manager.updateServerCache(query: query, node: Node(children: ["text": Node(.string("hi"))]))
        manager.setQueryInactive(query)  // No setQueryComplete: the answer never came.
        let cached = manager.serverCache(for: .default(at: "/other/text"))
        #expect(cached.complete)
        #expect(cached.node == Node(.string("hi")))
        #expect(manager.trackedQueries.map(\.isComplete) == [true])
        #expect(manager.lastCacheError == nil)
    }

    @Test("a filtered listen removed before its answer leaves its keys cached complete")
    func filteredDataBeforeTheAnswer() throws {
        let manager = try PersistenceManager(engine: try StorageEngine(store: MemoryStore()))
        let top = QuerySpec(path: "/scores", params: try QueryParams().orderedBy(.value).limitedToLast(1))
        manager.setQueryActive(top)
        manager.updateServerCache(query: top, node: Node(children: ["c": Node(.number(9))]))
        manager.setQueryInactive(top)
        let cached = manager.serverCache(for: top)
        #expect(cached.complete)
        #expect(cached.node == Node(children: ["c": Node(.number(9))]))
        #expect(!manager.serverCache(for: .default(at: "/scores")).complete)
    }

    @Test("server data where no query is tracked tracks none")
    func untrackedLocation() throws {
        let manager = try PersistenceManager(engine: try StorageEngine(store: MemoryStore()))
        manager.updateServerCache(query: .default(at: "/a/b"), node: Node(.number(1)))
        #expect(manager.trackedQueries.isEmpty)
        #expect(!manager.serverCache(for: .default(at: "/a/b")).complete)
    }
}
