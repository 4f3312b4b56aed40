public import CoreTree
import Foundation
public import QueryEngine
import Synchronization

/// The sync tree's persistence: implements ``PersistenceManaging`` over a ``StorageEngine``, tracks
/// queries for eviction and prunes the cache by its ``CachePolicy``.
///
/// User writes are durable before `saveUser…` returns and a failure to save throws, so a write
/// that could not be stored is never applied. Cache updates never throw (the data can be fetched
/// again); a failed one is kept in ``lastCacheError``.
public final class PersistenceManager: PersistenceManaging, Sendable {
    /// The storage underneath.
    public let engine: StorageEngine
    /// When and how much to prune.
    public let policy: CachePolicy
    /// The tracked queries and the cache bookkeeping, behind one lock: every change to them and
    /// the store commit that records it happen together.
    private let tracking: Mutex<Tracking>

    /// Opens persistence over `engine`: loads tracked queries (none is active after a restart)
    /// and prunes if the cache is over budget.
    ///
    /// - Parameter clock: milliseconds since 1970, for last-use times (injectable for tests).
    public init(
        engine: StorageEngine, policy: CachePolicy = .default,
        clock: @escaping @Sendable () -> Int64 = PersistenceManager.wallClockMilliseconds
    ) throws {
        self.engine = engine
        self.policy = policy
        var tracking = Tracking(engine: engine, policy: policy, now: clock)
        var wereActive: [TrackedQuery] = []
        for var query in try engine.trackedQueries() {
            tracking.nextQueryId = max(tracking.nextQueryId, query.id + 1)
            if query.isActive {
                query.isActive = false
                wereActive.append(query)
            }
            tracking.tracked[query.query] = query
        }
        try engine.saveTrackedQueries(wereActive)
        _ = try tracking.pruneIfNeeded()
        self.tracking = Mutex(tracking)
    }

    /// Opens a backend by name from `backends` in `directory`, then persistence over it.
    public convenience init(
        backend name: String, directory: String, backends: StorageBackends, policy: CachePolicy = .default
    ) throws {
        let store = try backends.open(name, directory: directory)
        try self.init(engine: try StorageEngine(store: store), policy: policy)
    }

    /// Milliseconds since 1970 from the system clock.
    public static let wallClockMilliseconds: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The last cache update that failed, if any (cache updates do not throw).
    public var lastCacheError: (any Error)? { tracking.withLock { $0.cacheError } }

    // MARK: - User writes

    public func saveUserOverwrite(path: TreePath, node: Node, writeId: Int64) throws {
        try engine.appendUserWrite(UserWriteRecord(writeId: writeId, path: path, kind: .overwrite(node)))
    }

    public func saveUserMerge(path: TreePath, children: CompoundWrite, writeId: Int64) throws {
        var entries: [UserWriteRecord.UpdateChild] = []
        children.forEachWrite { relative, node in entries.append(.init(path: relative, node: node)) }
        try engine.appendUserWrite(UserWriteRecord(writeId: writeId, path: path, kind: .merge(entries)))
    }

    /// Queues a named transaction (see ``UserWriteRecord/Kind/transaction(name:arguments:)``).
    public func saveNamedTransaction(path: TreePath, name: String, arguments: Node, writeId: Int64) throws {
        try engine.appendUserWrite(UserWriteRecord(writeId: writeId, path: path, kind: .transaction(name: name, arguments: arguments)))
    }

    public func removeUserWrite(writeId: Int64) {
        tracking.withLock { tracking in tracking.recordingCacheErrors { _ in try engine.removeUserWrite(writeId: writeId) } }
    }

    public func removeAllUserWrites() {
        tracking.withLock { tracking in tracking.recordingCacheErrors { _ in try engine.removeAllUserWrites() } }
    }

    /// The queued writes, oldest first, to replay after a restart.
    public func userWrites() throws -> [UserWriteRecord] { try engine.userWrites() }

    /// The same commit as an acknowledgement's, without a queue record to remove.
    public func applyUserWriteToServerCache(path: TreePath, node: Node) {
        acknowledgeUserOverwrite(path: path, node: node, removingWrite: nil)
    }

    /// The cache update, the tracked query that now covers it and the queue record's removal go
    /// to the store in one commit.
    public func acknowledgeUserOverwrite(path: TreePath, node: Node, removingWrite writeId: Int64?) {
        tracking.withLock { tracking in
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in
                guard !tracking.hasActiveDefaultQuery(at: path) else {
                    // With an active listener here the server sends the data anyway.
                    if let writeId { try engine.removeUserWrite(writeId: writeId) }
                    return
                }
                let (entry, changed) = tracking.trackedEntry(.default(at: path)) { $0.isComplete = true }
                try engine.acknowledgeUserWrite(writeId: writeId, caching: node, at: path, trackedQuery: changed ? entry : nil)
                if changed { tracking.adopt(entry) }
            }
        }
    }

    public func applyUserWriteToServerCache(path: TreePath, merge: CompoundWrite) {
        var writes: [(TreePath, Node)] = []
        merge.forEachWrite { relative, node in writes.append((path.appending(relative), node)) }
        for (writePath, node) in writes { applyUserWriteToServerCache(path: writePath, node: node) }
    }

    // MARK: - Server cache

    public func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool) {
        tracking.withLock { tracking in
            do {
                let node = try engine.serverCache(at: query.path)
                if tracking.isComplete(at: query.path) { return (node, true) }
                if let entry = tracking.tracked[Tracking.normalized(query)], entry.isComplete, !query.loadsAllData {
                    let keys = try engine.trackedKeys(forQuery: entry.id)
                    var filtered = Node.empty
                    for key in keys { filtered = filtered.updatingImmediateChild(key, to: node.immediateChild(key)) }
                    return (filtered, true)
                }
                return (node, false)
            } catch {
                tracking.cacheError = error
                return (.empty, false)
            }
        }
    }

    /// Stores the server's data for `query`, which is all of it: a tracked query for it is
    /// complete from now on (as in Firebase's `updateServerCache`), without waiting for the
    /// listen's answer, which never comes when the listen is removed first (a one-time read is
    /// removed as soon as the data arrives; the connection drops the late answer).
    public func updateServerCache(query: QuerySpec, node: Node) {
        tracking.withLock { tracking in
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in
                if query.loadsAllData {
                    try engine.overwriteServerCache(at: query.path, with: node)
                    // Only a query already tracked here: one per server update would bloat the tracking.
                    if tracking.tracked[Tracking.normalized(query)] != nil { try tracking.ensureTracked(query) { $0.isComplete = true } }
                } else {
                    // A filtered query's data is only some of the children: merge it in.
                    let children = node.isLeaf ? [] : Array(node.children)
                    try engine.mergeServerCache(at: query.path, children: children.map { (TreePath(keys: [$0.key]), $0.value) })
                    let entry = try tracking.ensureTracked(query) { _ in }
                    try engine.setTrackedKeys(children.map(\.key), forQuery: entry.id)
                    // Complete only once its keys are stored: a crash between leaves it incomplete.
                    try tracking.ensureTracked(query) { $0.isComplete = true }
                }
                try tracking.countUpdate()
            }
        }
    }

    public func updateServerCache(path: TreePath, merge: CompoundWrite) {
        var writes: [(path: TreePath, node: Node)] = []
        merge.forEachWrite { relative, node in writes.append((relative, node)) }
        tracking.withLock { tracking in
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in
                try engine.mergeServerCache(at: path, children: writes)
                try tracking.countUpdate()
            }
        }
    }

    // MARK: - Tracked queries

    public func setQueryActive(_ query: QuerySpec) {
        tracking.withLock { tracking in
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in
                let now = tracking.now()
                try tracking.ensureTracked(query) {
                    $0.isActive = true
                    $0.lastUse = now
                }
            }
        }
    }

    public func setQueryInactive(_ query: QuerySpec) {
        tracking.withLock { tracking in
            guard tracking.tracked[Tracking.normalized(query)] != nil else { return }
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in
                let now = tracking.now()
                try tracking.ensureTracked(query) {
                    $0.isActive = false
                    $0.lastUse = now
                }
            }
        }
    }

    public func setQueryComplete(_ query: QuerySpec) {
        tracking.withLock { tracking in
            tracking.recordingCacheErrors { (tracking: inout Tracking) throws in try tracking.ensureTracked(query) { $0.isComplete = true } }
        }
    }

    /// Pins (`keepSynced(true)`) or unpins a query. A pinned query's data is never pruned, and the
    /// pin is stored, so it holds after a restart until unpinned.
    public func setQueryPinned(_ query: QuerySpec, _ pinned: Bool) throws {
        try tracking.withLock { tracking throws in
            if !pinned && tracking.tracked[Tracking.normalized(query)] == nil { return }
            let now = tracking.now()
            try tracking.ensureTracked(query) {
                $0.isPinned = pinned
                $0.lastUse = now
            }
        }
    }

    /// Every tracked query.
    public var trackedQueries: [TrackedQuery] { tracking.withLock { $0.tracked.values.sorted { $0.id < $1.id } } }

    /// The pinned queries, e.g. to listen to them again after a restart.
    public var pinnedQueries: [QuerySpec] { tracking.withLock { $0.tracked.values.filter(\.isPinned).map(\.query) } }

    // MARK: - Size and pruning

    /// The cache's logical size in bytes (keys plus values of its rows).
    public var cacheSizeBytes: Int { engine.cacheSizeBytes }

    /// Prunes by the policy now (it also runs at open and every `checkInterval` updates).
    ///
    /// - Returns: how many tracked queries were pruned.
    @discardableResult
    public func pruneIfNeeded() throws -> Int { try tracking.withLock { tracking throws in try tracking.pruneIfNeeded() } }

    /// Prunes by `policy` instead of the manager's own (a benchmark times one prune this way).
    ///
    /// - Returns: how many tracked queries were pruned.
    @discardableResult
    package func pruneIfNeeded(by policy: CachePolicy) throws -> Int {
        try tracking.withLock { tracking throws in try tracking.pruneIfNeeded(policy) }
    }

    /// Removes all cached data that no active or pinned query and no pending write needs.
    public func purgeCache() throws {
        try tracking.withLock { tracking throws in
            let victims = tracking.tracked.values.filter(\.isPrunable)
            try tracking.prune(victims)
        }
    }

    /// Removes the cached data at and below `path` that no active or pinned query and no pending
    /// write needs, with the tracked queries there. A complete inactive query above `path` keeps
    /// vouching for the rest of its data: it is replaced by complete queries for the cached
    /// children beside the way down to `path`. Nothing is removed when an active or pinned query
    /// at or above `path`, or a pending write there or above, needs all of it.
    ///
    /// Each store commit leaves the cache consistent (a crash between them loses no data a query
    /// vouches for): the new queries first, then the removed ones, then the data.
    ///
    /// - Complexity: reads the cached data of each complete inactive query above `path` once.
    public func purgeCache(at path: TreePath) throws {
        try tracking.withLock { tracking throws in try tracking.purge(at: path) }
    }
}

/// The tracked queries and cache bookkeeping of a ``PersistenceManager``, always used under its
/// lock; each method that changes them writes the change to the store first.
private struct Tracking {
    let engine: StorageEngine
    let policy: CachePolicy
    let now: @Sendable () -> Int64
    var tracked: [QuerySpec: TrackedQuery] = [:]
    var nextQueryId: Int64 = 1
    var updatesSinceCheck = 0
    var cacheError: (any Error)?

    init(engine: StorageEngine, policy: CachePolicy, now: @escaping @Sendable () -> Int64) {
        self.engine = engine
        self.policy = policy
        self.now = now
    }

    static func normalized(_ query: QuerySpec) -> QuerySpec {
        query.loadsAllData ? .default(at: query.path) : query
    }

    /// Runs `body`, keeping its error as the last cache error instead of throwing it.
    mutating func recordingCacheErrors(_ body: (inout Tracking) throws -> Void) {
        do { try body(&self) } catch { cacheError = error }
    }

    mutating func countUpdate() throws {
        updatesSinceCheck += 1
        if updatesSinceCheck >= policy.checkInterval {
            updatesSinceCheck = 0
            _ = try pruneIfNeeded()
        }
    }

    @discardableResult
    mutating func ensureTracked(_ query: QuerySpec, _ change: (inout TrackedQuery) -> Void) throws -> TrackedQuery {
        let (entry, changed) = trackedEntry(query, change)
        if changed {
            try engine.saveTrackedQuery(entry)
            adopt(entry)
        }
        return entry
    }

    /// The tracked query for `query` (a new one if none is tracked) after `change`, and whether
    /// it differs from what is tracked; nothing is saved or remembered yet (see ``adopt(_:)``).
    func trackedEntry(_ query: QuerySpec, _ change: (inout TrackedQuery) -> Void) -> (entry: TrackedQuery, changed: Bool) {
        let key = Tracking.normalized(query)
        var entry = tracked[key] ?? TrackedQuery(id: nextQueryId, query: key, lastUse: now(), isComplete: false, isActive: false, isPinned: false)
        change(&entry)
        return (entry, tracked[key] != entry)
    }

    /// Remembers a tracked query once it is saved (a new one takes its id for good).
    mutating func adopt(_ entry: TrackedQuery) {
        if tracked[entry.query] == nil { nextQueryId = max(nextQueryId, entry.id + 1) }
        tracked[entry.query] = entry
    }

    func hasActiveDefaultQuery(at path: TreePath) -> Bool {
        defaultQuery(atOrAbove: path) { $0.isActive }
    }

    func isComplete(at path: TreePath) -> Bool {
        defaultQuery(atOrAbove: path) { $0.isComplete }
    }

    /// Whether a tracked default query at `path` or above it satisfies `condition`: a lookup per
    /// level (every acknowledged write outside a listener tracks a query of its own, so scanning
    /// them all made draining a queue quadratic).
    private func defaultQuery(atOrAbove path: TreePath, where condition: (TrackedQuery) -> Bool) -> Bool {
        var keys = path.keys[...]
        while true {
            if let entry = tracked[.default(at: TreePath(keys: Array(keys)))], condition(entry) { return true }
            guard !keys.isEmpty else { return false }
            keys = keys.dropLast()
        }
    }

    /// Prunes by `policy` (the manager's own by default) until the cache is within it.
    mutating func pruneIfNeeded(_ policy: CachePolicy? = nil) throws -> Int {
        let policy = policy ?? self.policy
        var pruned = 0
        while true {
            let prunable = tracked.values.filter(\.isPrunable).sorted { ($0.lastUse, $0.id) < ($1.lastUse, $1.id) }
            guard !prunable.isEmpty, policy.needsPruning(cacheBytes: engine.cacheSizeBytes, prunableQueries: prunable.count) else {
                break
            }
            let victims = Array(prunable.prefix(policy.queriesToPrune(of: prunable.count)))
            try prune(victims)
            pruned += victims.count
        }
        return pruned
    }

    /// Removes `victims` and their data, keeping what the other queries and pending writes need.
    mutating func prune(_ victims: [TrackedQuery]) throws {
        let victimIds = Set(victims.map(\.id))
        var keep: [TreePath] = []
        for entry in tracked.values where !victimIds.contains(entry.id) { keep += try paths(of: entry) }
        keep += try engine.userWrites().map(\.path)
        for victim in victims {
            for path in try paths(of: victim) where !keep.contains(where: { $0.contains(path) }) {
                try engine.pruneServerCache(at: path, keeping: keep.filter { path.contains($0) })
            }
            try engine.removeTrackedQuery(id: victim.id)
            tracked[victim.query] = nil
        }
    }

    /// Removes the data at and below `target` that nothing needs (see
    /// ``PersistenceManager/purgeCache(at:)``).
    mutating func purge(at target: TreePath) throws {
        var keep: [TreePath] = []
        for entry in tracked.values where !entry.isPrunable { keep += try paths(of: entry) }
        keep += try engine.userWrites().map(\.path)
        guard !keep.contains(where: { $0.contains(target) }) else { return }

        // Complete queries above the target: their other data stays vouched for, piece by piece.
        var ancestors: [TrackedQuery] = []
        var pieces: [TreePath] = []
        for entry in tracked.values where entry.isPrunable && entry.isComplete && entry.query.path.isAncestor(of: target) {
            let covered = try paths(of: entry)
            guard covered.contains(where: { $0.contains(target) }) else { continue }
            ancestors.append(entry)
            for path in covered { pieces += try self.pieces(of: path, around: target) }
        }
        var replacements: [TrackedQuery] = []
        var nextId = nextQueryId
        var seen: Set<TreePath> = []
        for piece in pieces where seen.insert(piece).inserted {
            let lastUse = ancestors.filter { $0.query.path.contains(piece) }.map(\.lastUse).max() ?? now()
            let existing = tracked[.default(at: piece)]
            var (entry, changed) = trackedEntry(.default(at: piece)) { entry in
                entry.isComplete = true
                entry.lastUse = existing.map { max($0.lastUse, lastUse) } ?? lastUse
            }
            guard changed else { continue }
            if tracked[entry.query] == nil {
                // A new query: trackedEntry gives each the same next id.
                entry.id = nextId
                nextId += 1
            }
            replacements.append(entry)
        }
        try engine.saveTrackedQueries(replacements)
        for entry in replacements { adopt(entry) }

        // The queries at and below the target whose data goes, and the ancestors now split.
        let victims = tracked.values.filter { entry in
            entry.isPrunable && target.contains(entry.query.path) && !keep.contains(where: { $0.contains(entry.query.path) })
        }
        for entry in ancestors + victims {
            try engine.removeTrackedQuery(id: entry.id)
            tracked[entry.query] = nil
        }
        try engine.pruneServerCache(at: target, keeping: keep.filter { target.contains($0) })
    }

    /// The locations that together hold the data at `covered` except `target` (at or below it):
    /// the cached children beside each step of the way from `covered` down to `target`.
    private func pieces(of covered: TreePath, around target: TreePath) throws -> [TreePath] {
        guard let relative = target.relative(to: covered) else { return [covered] }
        var node = try engine.serverCache(at: covered)
        var level = covered
        var result: [TreePath] = []
        for key in relative.keys {
            for (child, _) in node.children where child != key { result.append(level.child(child)) }
            node = node.immediateChild(key)
            level = level.child(key)
        }
        return result
    }

    /// The cache paths a tracked query covers: its location, or for a filtered query its keys.
    private func paths(of entry: TrackedQuery) throws -> [TreePath] {
        if entry.query.loadsAllData { return [entry.query.path] }
        return try engine.trackedKeys(forQuery: entry.id).map { entry.query.path.child($0) }
    }
}
