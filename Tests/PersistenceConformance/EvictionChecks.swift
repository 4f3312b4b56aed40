import CoreTree
import Persistence
import QueryEngine
import Synchronization

/// Least-recently-used pruning, and what it must never prune.
struct EvictionChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    /// A clock that moves one millisecond per reading.
    final class TickingClock: Sendable {
        private let now = Atomic<Int64>(1_000)
        var function: @Sendable () -> Int64 { { self.now.add(1, ordering: .relaxed).newValue } }
    }

    /// About `bytes` of data: children of 100-byte strings.
    static func data(_ bytes: Int, tag: String) -> Node {
        var children: [(key: ChildKey, value: Node)] = []
        for index in 0..<max(1, bytes / 110) {
            children.append((ChildKey("c\(index)"), Node(.string(tag + String(repeating: "x", count: 100 - tag.count)))))
        }
        return Node(children: SortedMap(children))
    }

    private static func query(_ path: String) -> QuerySpec { .default(at: TreePath(unchecked: path)) }

    /// Listens, receives data, completes and stops listening, as the sync tree would.
    private static func use(_ manager: PersistenceManager, _ query: QuerySpec, _ node: Node, stayActive: Bool = false) {
        manager.setQueryActive(query)
        manager.updateServerCache(query: query, node: node)
        manager.setQueryComplete(query)
        if !stayActive { manager.setQueryInactive(query) }
    }

    func leastRecentFirst() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let budget = 8_000
        let manager = try PersistenceManager(
            engine: engine, policy: .unchecked(maxBytes: budget, checkInterval: 1_000_000), clock: TickingClock().function)
        for index in 0..<10 { EvictionChecks.use(manager, EvictionChecks.query("/q\(index)"), EvictionChecks.data(2_000, tag: "q\(index)")) }
        let before = manager.cacheSizeBytes
        try require(before > 2 * budget, "the setup should fill the cache past twice the budget, it holds \(before) bytes")
        let pruned = try manager.pruneIfNeeded()
        let after = manager.cacheSizeBytes
        try require(after <= budget, "after pruning the cache holds \(after) bytes, over the \(budget)-byte budget")
        try require(after == (try engine.recountCacheSize()), "the running size disagrees with a recount after pruning")
        let remaining = Set(manager.trackedQueries.map { $0.query.path.wireForm })
        let expectedRemaining = Set((pruned..<10).map { "/q\($0)" })
        try require(pruned > 0 && remaining == expectedRemaining,
                    "pruned \(pruned) queries; remaining \(remaining.sorted()), expected the most recent \(expectedRemaining.sorted())")
        for index in 0..<10 {
            let cached = try engine.serverCache(at: TreePath(unchecked: "/q\(index)"))
            if index < pruned {
                try require(cached.isEmpty, "/q\(index) was pruned but its data is still cached")
            } else {
                try require(cached == EvictionChecks.data(2_000, tag: "q\(index)"), "/q\(index) was kept but its data changed")
            }
        }
    }

    func keepsActivePinnedAndPending() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let manager = try PersistenceManager(engine: engine, policy: .unchecked(maxBytes: 1, checkInterval: 1_000_000), clock: TickingClock().function)
        let pinnedData = EvictionChecks.data(1_000, tag: "pin")
        let pendingData = EvictionChecks.data(1_000, tag: "pend")
        let activeData = EvictionChecks.data(1_000, tag: "act")
        // Oldest first: the pinned and pending ones are the least recently used.
        EvictionChecks.use(manager, EvictionChecks.query("/pinned"), pinnedData)
        try manager.setQueryPinned(EvictionChecks.query("/pinned"), true)
        EvictionChecks.use(manager, EvictionChecks.query("/pending"), pendingData)
        try manager.saveUserOverwrite(path: "/pending/c0", node: Node(.string("mine")), writeId: 1)
        EvictionChecks.use(manager, EvictionChecks.query("/old"), EvictionChecks.data(1_000, tag: "old"))
        // Overlap: a prunable query above an active one; the active part is kept.
        EvictionChecks.use(manager, EvictionChecks.query("/outer"), Node(children: ["inner": activeData, "rest": EvictionChecks.data(500, tag: "rest")]))
        EvictionChecks.use(manager, EvictionChecks.query("/outer/inner"), activeData, stayActive: true)
        try manager.pruneIfNeeded()
        try require(try engine.serverCache(at: "/pinned") == pinnedData, "pinned data was pruned")
        try require(try engine.serverCache(at: "/pending/c0") == pendingData.immediateChild("c0"), "data under a pending write was pruned")
        try require(try engine.serverCache(at: "/outer/inner") == activeData, "active data inside a pruned query was pruned")
        try require(try engine.serverCache(at: "/outer/rest").isEmpty, "the inactive rest of /outer was not pruned")
        try require(try engine.serverCache(at: "/old").isEmpty, "an old inactive query was not pruned")
        try require(try engine.userWrites().map(\.writeId) == [1], "pruning touched the write queue")
        let kept = Set(manager.trackedQueries.map { $0.query.path.wireForm })
        try require(kept == ["/pinned", "/outer/inner"], "tracked queries left: \(kept.sorted())")
    }

    func pinningSurvivesRestart() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let pinnedData = EvictionChecks.data(3_000, tag: "pin")
        do {
            let engine = try StorageEngine(store: try suite.openStore(directory))
            let manager = try PersistenceManager(engine: engine, policy: .unchecked(maxBytes: 1_000_000, checkInterval: 1_000_000), clock: TickingClock().function)
            EvictionChecks.use(manager, EvictionChecks.query("/pinned"), pinnedData)
            try manager.setQueryPinned(EvictionChecks.query("/pinned"), true)
            EvictionChecks.use(manager, EvictionChecks.query("/other"), EvictionChecks.data(3_000, tag: "other"))
            try engine.close()
        }
        // Reopened with a budget far below the data: pruning at open must keep the pinned query.
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let manager = try PersistenceManager(engine: engine, policy: .unchecked(maxBytes: 1, checkInterval: 1_000_000), clock: TickingClock().function)
        try require(manager.pinnedQueries == [EvictionChecks.query("/pinned")], "the pin did not survive the restart: \(manager.pinnedQueries)")
        try require(try engine.serverCache(at: "/pinned") == pinnedData, "pinned data was pruned at open")
        try require(try engine.serverCache(at: "/other").isEmpty, "unpinned data survived pruning at open")
        try require(manager.serverCache(for: EvictionChecks.query("/pinned")).complete, "the pinned query is no longer complete")
        try manager.setQueryPinned(EvictionChecks.query("/pinned"), false)
        try manager.pruneIfNeeded()
        try require(try engine.serverCache(at: "/pinned").isEmpty, "unpinned data was not pruned")
    }
}
