public import CoreTree
import Foundation
import Synchronization

/// Everything persistence keeps, written once over any ``OrderedKeyValueStore``: the server
/// cache, the queue of user writes, tracked queries and their keys, and metadata.
///
/// Thread-safe: operations are serialised; durable writes from concurrent callers share syncs.
/// Cache updates commit without syncing (they survive a killed process; after an OS crash the
/// cache is merely older). Queue changes are durable before the call returns.
public final class StorageEngine: Sendable {

    /// The format this version writes and reads: 2 stores a checksum with every row
    /// (``ChecksummedStore``); format 1 stores are converted when opened.
    public static let formatVersion = 2

    /// Upgrades a store written in an older format (`from`) to ``formatVersion``. Format 1 needs
    /// none: the engine adds the checksums itself.
    public typealias Migration = @Sendable (_ from: Int, _ store: any OrderedKeyValueStore) throws -> Void

    /// The store underneath, seen through its row checksums: reads verify, writes seal.
    public var store: any OrderedKeyValueStore { sealedStore }
    private let sealedStore: ChecksummedStore
    private let groupCommit = GroupCommit()
    /// What the engine keeps in memory, behind one lock that also serialises its cache and
    /// tracked-query changes (`store` is thread-safe itself).
    private struct State {
        /// The server cache's running size.
        var cacheBytes = 0
        /// The tracked queries as last read, kept until one is saved or removed, so opening a store
        /// (recovery's check, then the persistence manager) decodes them once.
        var trackedQueryCache: [TrackedQuery]?
    }

    private let state = Mutex(State())

    /// Opens the engine over `store`, checking the format and reading the cache size stored with
    /// the last cache change (counted from the rows only when none is stored).
    ///
    /// - Throws: ``StorageError/Code-swift.enum/unsupportedFormat(found:supported:)`` for a store
    ///   written by a newer version; whatever `migrate` throws for an older one;
    ///   ``StorageError/Code-swift.enum/corrupt`` when a row read fails its checksum.
    public init(store base: any OrderedKeyValueStore, migrate: Migration? = nil) throws {
        sealedStore = try StorageEngine.openSealed(base, migrate: migrate)
        try state.withLock { state in try loadCacheSize(&state) }
    }

    /// Checks (and converts, when older) the format of `base` and returns it seen through its row
    /// checksums: the opening shared by the client's engine and the server's embedded store,
    /// which keeps its tree in the same rows.
    package static func openSealed(_ base: any OrderedKeyValueStore, migrate: Migration? = nil) throws -> ChecksummedStore {
        let store = ChecksummedStore(base, unsealedKey: StorageKeys.formatVersion)
        let found = try base.get(StorageKeys.formatVersion).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
        if let found, found > StorageEngine.formatVersion {
            throw StorageError(
                .unsupportedFormat(found: found, supported: StorageEngine.formatVersion),
                "the store was written in format \(found), newer than the \(StorageEngine.formatVersion) this version reads; open it with a newer version")
        }
        if found == 1 {
            try StorageEngine.addChecksums(to: base)
        } else if let found, found < StorageEngine.formatVersion {
            guard let migrate else {
                throw StorageError(
                    .unsupportedFormat(found: found, supported: StorageEngine.formatVersion),
                    "the store is in format \(found) and no migration to \(StorageEngine.formatVersion) was given")
            }
            try migrate(found, store)
        }
        if found != StorageEngine.formatVersion {
            var batch = WriteBatch()
            batch.put(StorageKeys.formatVersion, Array(String(StorageEngine.formatVersion).utf8))
            try store.write(batch, durable: true)
        }
        return store
    }

    /// Reads the stored cache size; counts and stores it when there is none. The size is written
    /// in the same atomic batch as every cache change, so it is never behind the rows.
    private func loadCacheSize(_ state: inout State) throws {
        if let stored = try store.get(StorageKeys.cacheSize) {
            guard let size = Int(String(decoding: stored, as: UTF8.self)), size >= 0 else {
                throw StorageError(.invalidRecord, "the stored cache size is unreadable")
            }
            state.cacheBytes = size
            return
        }
        state.cacheBytes = try countCacheBytes()
        try storeCacheSize(state.cacheBytes)
    }

    /// Stores the running cache size on its own (a cache change stores it in its own batch).
    private func storeCacheSize(_ cacheBytes: Int) throws {
        var batch = WriteBatch()
        batch.put(StorageKeys.cacheSize, Array(String(cacheBytes).utf8))
        try store.write(batch, durable: false)
    }

    /// Converts a format 1 store: every row gets its checksum and the version becomes 2, in one
    /// atomic batch (a crash leaves the store in format 1, to be converted at the next open).
    private static func addChecksums(to base: any OrderedKeyValueStore) throws {
        var batch = WriteBatch()
        try base.scan(.all, reverse: false) { key, value in
            if key != StorageKeys.formatVersion { batch.put(key, ChecksummedStore.seal(key: key, value: value)) }
            return true
        }
        batch.put(StorageKeys.formatVersion, Array(String(StorageEngine.formatVersion).utf8))
        try base.write(batch, durable: true)
    }

    private func locked<T: Sendable>(_ body: (inout State) throws -> T) throws -> T {
        try state.withLock { state throws -> T in try body(&state) }
    }

    /// Closes the store.
    public func close() throws { try store.close() }

    /// How many syncs durable writes have needed so far (fewer than writes when they overlap).
    public var syncCount: Int { groupCommit.syncCount }

    // MARK: - Size

    /// The server cache's logical size: key plus value bytes of its rows, kept as a running count.
    public var cacheSizeBytes: Int { state.withLock { $0.cacheBytes } }

    /// Counts the cache size again from the rows (a consistency check) and stores it.
    @discardableResult
    public func recountCacheSize() throws -> Int {
        try locked { state in
            state.cacheBytes = try countCacheBytes()
            try storeCacheSize(state.cacheBytes)
            return state.cacheBytes
        }
    }

    private func countCacheBytes() throws -> Int {
        var total = 0
        try store.scan(KeyRange(prefix: StorageKeys.cachePrefix), reverse: false) { key, value in
            total += key.count + value.count
            return true
        }
        return total
    }

    // MARK: - Server cache

    /// The cached server data at `path` (empty when nothing is cached there).
    public func serverCache(at path: TreePath) throws -> Node {
        try locked { _ in try readCache(at: path) }
    }

    private func readCache(at path: TreePath) throws -> Node { try StorageEngine.readTree(at: path, from: store) }

    /// Replaces the cached server data at `path` with `node` (empty removes it).
    public func overwriteServerCache(at path: TreePath, with node: Node) throws {
        try locked { state in
            var batch = WriteBatch()
            var delta = 0
            try addOverwrite(at: path, node, to: &batch, delta: &delta)
            try commitCache(batch, delta: delta, state: &state)
        }
    }

    /// Records an acknowledged set in one commit: `node` replaces the cached server data at `path`,
    /// `trackedQuery` (when given) is saved, and the write's queue record (when given) is removed.
    ///
    /// The three used to be three commits per acknowledgement, which made draining a queued
    /// backlog on SQLite three transactions per write; together they also cannot be torn apart by
    /// a crash. Like ``removeUserWrite(writeId:)``, nothing is synced here.
    public func acknowledgeUserWrite(writeId: Int64?, caching node: Node, at path: TreePath, trackedQuery: TrackedQuery?) throws {
        try locked { state in
            var batch = WriteBatch()
            var delta = 0
            try addOverwrite(at: path, node, to: &batch, delta: &delta)
            if let trackedQuery {
                batch.put(StorageKeys.queryKey(trackedQuery.id), trackedQuery.encoded())
                state.trackedQueryCache = nil
            }
            if let writeId { batch.delete(StorageKeys.writeKey(writeId)) }
            try commitCache(batch, delta: delta, state: &state)
        }
    }

    /// Replaces the cached data at each of `children`' paths below `path`.
    ///
    /// The usual merge (distinct immediate children, at least one of them data, nothing cached as
    /// a leaf at `path` or above) is one commit. Any other merge commits child by child: a later
    /// child may lie inside an earlier one, and the rows each overwrite reads must include what
    /// the earlier ones wrote.
    public func mergeServerCache(at path: TreePath, children: [(path: TreePath, node: Node)]) throws {
        if try locked({ state in try mergeInOneCommit(at: path, children: children, state: &state) }) { return }
        for child in children {
            try overwriteServerCache(at: path.appending(child.path), with: child.node)
        }
    }

    /// Commits the merge as one batch when its children cannot see each other's rows: distinct
    /// immediate children whose rows fit, at least one of them data (so no priority above is
    /// orphaned), and no leaf row at `path` or above (which each child would remove). Returns
    /// `false`, having written nothing, for any other merge.
    private func mergeInOneCommit(at path: TreePath, children: [(path: TreePath, node: Node)], state: inout State) throws -> Bool {
        guard children.count > 1, children.contains(where: { !$0.node.isEmpty }),
              children.allSatisfy({ $0.path.depth == 1 }), Set(children.map(\.path)).count == children.count,
              StorageKeys.fits(path)
        else { return false }
        for depth in 0...path.depth {
            if try store.get(StorageKeys.cacheKey(TreePath(keys: Array(path.keys.prefix(depth))))) != nil { return false }
        }
        var batch = WriteBatch()
        var delta = 0
        for child in children {
            let childPath = path.appending(child.path)
            guard StorageKeys.fits(childPath) else { return false }
            try addReplacement(at: childPath, child.node, to: &batch, delta: &delta)
        }
        try commitCache(batch, delta: delta, state: &state)
        return true
    }

    /// Removes the cached data at `path` except the subtrees at `keeping` (paths below `path`),
    /// in one commit, so a crash never leaves kept data removed.
    public func pruneServerCache(at path: TreePath, keeping: [TreePath]) throws {
        try locked { state in
            let current = try readCache(at: path)
            guard !current.isEmpty else { return }
            var remaining = Node.empty
            for kept in keeping {
                guard let relative = kept.relative(to: path) else { continue }
                remaining = remaining.updatingChild(at: relative, to: current.child(at: relative))
            }
            var batch = WriteBatch()
            var delta = 0
            try addOverwrite(at: path, remaining, to: &batch, delta: &delta)
            try commitCache(batch, delta: delta, state: &state)
        }
    }

    /// Removes the whole server cache.
    public func removeAllServerCache() throws {
        try locked { state in
            var batch = WriteBatch()
            batch.deleteRange(KeyRange(prefix: StorageKeys.cachePrefix))
            try commitCache(batch, delta: -state.cacheBytes, state: &state)
        }
    }

    private func commitCache(_ batch: WriteBatch, delta: Int, state: inout State) throws {
        guard !batch.isEmpty else { return }
        var batch = batch
        let newSize = state.cacheBytes + delta
        batch.put(StorageKeys.cacheSize, Array(String(newSize).utf8))
        try store.write(batch, durable: false)
        state.cacheBytes = newSize
    }

    /// Adds to `batch` what replaces the data at `path` by `node`, and the size change to `delta`.
    private func addOverwrite(at path: TreePath, _ node: Node, to batch: inout WriteBatch, delta: inout Int) throws {
        let anchor = StorageKeys.deepestFittingAncestor(path)
        if node.isEmpty {
            // Nothing lies below a leaf, so removing something there changes nothing.
            for depth in 0..<min(path.depth, anchor.depth + 1) {
                if try store.get(StorageKeys.cacheKey(TreePath(keys: Array(path.keys.prefix(depth))))) != nil { return }
            }
            try removeOrphanedPriorities(above: path, to: &batch, delta: &delta)
        }
        // A leaf at an ancestor becomes (or stays) a parent: remove its row. Its priority row stays,
        // as a leaf's priority carries over when children are written into it.
        for depth in 0..<min(path.depth, anchor.depth + 1) {
            let ancestor = TreePath(keys: Array(path.keys.prefix(depth)))
            let key = StorageKeys.cacheKey(ancestor)
            if let old = try store.get(key) {
                batch.delete(key)
                delta -= key.count + old.count
            }
        }
        if StorageKeys.fits(path) {
            try addReplacement(at: path, node, to: &batch, delta: &delta)
        } else {
            let key = StorageKeys.overflowKey(anchor)
            var subtree = Node.empty
            if let old = try store.get(key) {
                subtree = try CacheRows.decode(old)
                delta -= key.count + old.count
            }
            subtree = subtree.updatingChild(at: path.relative(to: anchor)!, to: node)
            if subtree.isEmpty {
                batch.delete(key)
            } else {
                let value = CacheRows.encodeSubtree(subtree)
                batch.put(key, value)
                delta += key.count + value.count
            }
        }
    }

    /// Adds to `batch` what replaces the rows at and below `path` (a path whose rows fit) by
    /// `node`'s: the new rows, and deletes of the old rows no new row replaces (a range delete
    /// when nothing replaces them), so no store reads the range twice.
    private func addReplacement(at path: TreePath, _ node: Node, to batch: inout WriteBatch, delta: inout Int) throws {
        let range = KeyRange(prefix: StorageKeys.cacheKey(path))
        var rows = WriteBatch()
        StorageEngine.addRows(of: node, at: path, to: &rows, delta: &delta)
        var newKeys = Set<[UInt8]>(minimumCapacity: rows.operations.count)
        for case .put(let key, _) in rows.operations { newKeys.insert(key) }
        var staleKeys: [[UInt8]] = []
        // Only the old rows' keys and sizes are needed: read them under the checksums, unverified
        // (nothing read here becomes data; the rows are replaced).
        try sealedStore.base.scan(range, reverse: false) { key, sealed in
            delta -= key.count + sealed.count - ChecksummedStore.overhead
            if !newKeys.contains(key) { staleKeys.append(key) }
            return true
        }
        if newKeys.isEmpty {
            if !staleKeys.isEmpty { batch.deleteRange(range) }
        } else {
            for key in staleKeys { batch.delete(key) }
        }
        batch.append(contentsOf: rows)
    }

    /// Adds the rows of `node` at `path` (a path whose rows fit) to `batch`: one per leaf, and an
    /// overflow row for leaves whose keys would be too long.
    ///
    /// Keys are built as the walk goes down, one key appended to a shared byte prefix, rather
    /// than each leaf's whole path encoded again.
    ///
    /// With `sealed`, each value already carries its checksum (``ChecksummedStore/appendChecksum(to:key:)``),
    /// for a bulk writer that writes to the store under the checksums; `delta` counts the bytes
    /// before checksums either way.
    package static func addRows(of node: Node, at path: TreePath, to batch: inout WriteBatch, delta: inout Int, sealed: Bool = false) {
        var prefix = StorageKeys.cacheKey(path)
        var overflow: [TreePath: Node] = [:]
        var keys = path.keys
        addRows(of: node, keys: &keys, prefix: &prefix, to: &batch, delta: &delta, overflow: &overflow, sealed: sealed)
        for (owner, subtree) in overflow {
            let key = StorageKeys.overflowKey(owner)
            var value = CacheRows.encodeSubtree(subtree)
            delta += key.count + value.count
            if sealed { ChecksummedStore.appendChecksum(to: &value, key: key) }
            batch.put(key, value)
        }
    }

    /// The walk of ``addRows(of:at:to:delta:sealed:)``: `prefix` is the cache key of the path
    /// `keys` (whose rows fit). Both grow and shrink back on the way down: a path is made only for
    /// a leaf too deep for its own row.
    private static func addRows(
        of node: Node, keys: inout [ChildKey], prefix: inout [UInt8], to batch: inout WriteBatch, delta: inout Int,
        overflow: inout [TreePath: Node], sealed: Bool
    ) {
        func put(_ value: consuming [UInt8], under key: [UInt8]) {
            delta += key.count + value.count
            if sealed {
                var value = value
                ChecksummedStore.appendChecksum(to: &value, key: key)
                batch.put(key, value)
            } else {
                batch.put(key, value)
            }
        }
        func withChild(_ key: ChildKey, _ body: (inout [UInt8]) -> Void) -> Bool {
            let utf8 = key.stringValue.utf8
            // The child's key, plus its overflow marker, must fit (``StorageKeys/fits(_:)``).
            guard prefix.count + utf8.count + 2 <= StorageKeys.maxCacheKeyBytes else { return false }
            let mark = prefix.count
            prefix.append(contentsOf: utf8)
            prefix.append(StorageKeys.separator)
            body(&prefix)
            prefix.removeSubrange(mark...)
            return true
        }
        if let priority = node.priority {
            let leaf = priority.node
            let fitted = withChild(.priority) { put(CacheRows.encodeLeaf(leaf), under: $0) }
            if !fitted { addOverflow(leaf, at: TreePath(keys: keys + [.priority]), to: &overflow) }
        }
        if node.isLeaf {
            put(CacheRows.encodeLeaf(node.withPriority(nil)), under: prefix)
            return
        }
        for (key, child) in node.children {
            keys.append(key)
            defer { keys.removeLast() }
            let fitted = withChild(key) { childPrefix in
                addRows(of: child, keys: &keys, prefix: &childPrefix, to: &batch, delta: &delta, overflow: &overflow, sealed: sealed)
            }
            if !fitted {
                CacheRows.forEachLeaf(of: child, at: TreePath(keys: keys)) { full, leaf in addOverflow(leaf, at: full, to: &overflow) }
            }
        }
    }

    /// Adds a leaf whose key is too long to the overflow row of its deepest ancestor that fits.
    private static func addOverflow(_ leaf: Node, at full: TreePath, to overflow: inout [TreePath: Node]) {
        let owner = StorageKeys.deepestFittingAncestor(full)
        overflow[owner, default: .empty] = overflow[owner, default: .empty].updatingChild(at: full.relative(to: owner)!, to: leaf)
    }

    /// Removing `path` may leave ancestors with nothing but a priority row; an empty node has no
    /// priority, so those rows go too (deepest first, stopping at the first ancestor with other data).
    /// (Below a path too long for its own rows, the overflow row keeps any such priority.)
    private func removeOrphanedPriorities(above path: TreePath, to batch: inout WriteBatch, delta: inout Int) throws {
        guard StorageKeys.fits(path) else { return }
        let removed = KeyRange(prefix: StorageKeys.cacheKey(path))
        var ancestor = path
        while let parent = ancestor.parent, StorageKeys.fits(parent) {
            ancestor = parent
            let priorityKey = StorageKeys.cacheKey(ancestor.child(.priority))
            var priorityRow: [UInt8]?
            var hasOtherRows = false
            try store.scan(KeyRange(prefix: StorageKeys.cacheKey(ancestor)), reverse: false) { key, value in
                if key == priorityKey {
                    priorityRow = value
                } else if !removed.contains(key) {
                    hasOtherRows = true
                }
                return !hasOtherRows
            }
            if hasOtherRows { return }
            if let priorityRow {
                batch.delete(priorityKey)
                delta -= priorityKey.count + priorityRow.count
            }
        }
    }

    // MARK: - User write queue

    /// Appends a user write to the queue; it is durable when this returns. Writes are appended
    /// in increasing id order; the id is remembered as the last one issued (``lastWriteId()``).
    public func appendUserWrite(_ record: UserWriteRecord) throws {
        var batch = WriteBatch()
        batch.put(StorageKeys.writeKey(record.writeId), record.encoded())
        batch.put(StorageKeys.lastWriteId, StorageKeys.bigEndian(UInt64(bitPattern: record.writeId)))
        try commitShared(batch)
    }

    /// The highest write id ever appended to this store's queue (0 when none), so a client never
    /// reuses an id, also once its queue is empty: ids identify writes to the server.
    public func lastWriteId() throws -> Int64 {
        guard let bytes = try store.get(StorageKeys.lastWriteId), let value = StorageKeys.readBigEndian(bytes[...]) else { return 0 }
        return Int64(bitPattern: value)
    }

    /// Removes a write from the queue (acknowledged or reverted), without a sync of its own.
    ///
    /// The removal survives the process being killed (every backend hands it to the operating
    /// system before this returns) and is made durable by the next sync; only a power loss before
    /// then can bring the write back, to be sent again, which a server honouring exactly-once
    /// stamps does not apply twice (as Firebase's own clients, which never sync their queue,
    /// accept for every write). A sync per acknowledgement made draining a backlog of 100,000
    /// queued writes disk-bound: one fsync each.
    public func removeUserWrite(writeId: Int64) throws {
        var batch = WriteBatch()
        batch.delete(StorageKeys.writeKey(writeId))
        try store.write(batch, durable: false)
    }

    /// Empties the queue; durable when this returns.
    public func removeAllUserWrites() throws {
        var batch = WriteBatch()
        batch.deleteRange(KeyRange(prefix: StorageKeys.writePrefix))
        try commitShared(batch)
    }

    /// The queued writes, oldest first.
    public func userWrites() throws -> [UserWriteRecord] {
        var records: [UserWriteRecord] = []
        try store.scan(KeyRange(prefix: StorageKeys.writePrefix), reverse: false) { key, value in
            guard let id = StorageKeys.readBigEndian(key.dropFirst()) else {
                throw StorageError(.invalidRecord, "a queue key has the wrong length")
            }
            records.append(try UserWriteRecord.decode(writeId: Int64(bitPattern: id), value))
            return true
        }
        return records
    }

    /// Writes `batch` durably, sharing the sync with concurrent callers (group commit). Queue
    /// records are only put and deleted, never read and changed, so this does not hold the engine
    /// lock: concurrent writers' batches go to the store together.
    func commitShared(_ batch: WriteBatch) throws {
        try groupCommit.commit(batch) { group in try store.write(group, durable: true) }
    }

    // MARK: - Tracked queries

    /// Every tracked query (decoded once, then kept until one is saved or removed).
    public func trackedQueries() throws -> [TrackedQuery] {
        try locked { state in
            if let cached = state.trackedQueryCache { return cached }
            let queries = try readTrackedQueries()
            state.trackedQueryCache = queries
            return queries
        }
    }

    private func readTrackedQueries() throws -> [TrackedQuery] {
        var queries: [TrackedQuery] = []
        try store.scan(KeyRange(prefix: StorageKeys.queryPrefix), reverse: false) { key, value in
            guard let id = StorageKeys.readBigEndian(key.dropFirst()) else {
                throw StorageError(.invalidRecord, "a tracked query key has the wrong length")
            }
            queries.append(try TrackedQuery.decode(id: Int64(bitPattern: id), value))
            return true
        }
        return queries
    }

    /// Saves (adds or replaces) a tracked query.
    public func saveTrackedQuery(_ query: TrackedQuery) throws {
        try saveTrackedQueries([query])
    }

    /// Saves (adds or replaces) tracked queries in one commit.
    public func saveTrackedQueries(_ queries: [TrackedQuery]) throws {
        guard !queries.isEmpty else { return }
        var batch = WriteBatch()
        for query in queries { batch.put(StorageKeys.queryKey(query.id), query.encoded()) }
        try locked { state in
            state.trackedQueryCache = nil
            try store.write(batch, durable: false)
        }
    }

    /// Removes a tracked query and its tracked keys.
    public func removeTrackedQuery(id: Int64) throws {
        var batch = WriteBatch()
        batch.delete(StorageKeys.queryKey(id))
        batch.deleteRange(KeyRange(prefix: StorageKeys.trackedKeysPrefix(id)))
        try locked { state in
            state.trackedQueryCache = nil
            try store.write(batch, durable: false)
        }
    }

    /// Replaces the keys a filtered query is known to hold.
    public func setTrackedKeys(_ keys: [ChildKey], forQuery id: Int64) throws {
        let prefix = StorageKeys.trackedKeysPrefix(id)
        var batch = WriteBatch()
        batch.deleteRange(KeyRange(prefix: prefix))
        for key in keys { batch.put(prefix + Array(key.stringValue.utf8), []) }
        try store.write(batch, durable: false)
    }

    /// The keys a filtered query is known to hold.
    public func trackedKeys(forQuery id: Int64) throws -> [ChildKey] {
        let prefix = StorageKeys.trackedKeysPrefix(id)
        var keys: [ChildKey] = []
        try store.scan(KeyRange(prefix: prefix), reverse: false) { key, _ in
            keys.append(ChildKey(String(decoding: key[prefix.count...], as: UTF8.self)))
            return true
        }
        return keys
    }
}
