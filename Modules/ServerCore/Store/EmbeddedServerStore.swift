public import CoreTree
import Dispatch
import Foundation
public import Persistence

/// The embedded default ``ServerStore``: the namespace's tree as rows in the layout of
/// ``Persistence/StorageEngine``'s cache (checksummed, a subtree one key range), over any
/// ``Persistence/OrderedKeyValueStore`` backend (SQLite, LMDB, LevelDB or memory), one directory
/// per namespace. Settings (the rules, the writer ledger) are rows beside the tree.
///
/// The store owns its commit thread: every call runs there, in the order made, and the caller
/// awaits it without blocking (an fsync holds only this store's thread).
///
/// It decides its own layout: a change is written as the complete data at the change's
/// *anchor*, the path itself or, for paths too long for the keys, the deepest ancestor whose rows
/// fit; a removal is written at the highest ancestor the removal left empty.
public final class EmbeddedServerStore: ServerStore {
    private let rows: ChecksummedStore
    private let thread = DispatchQueue(label: "rtdb.store")

    /// Opens the store over `store`, on the calling thread (it checks the store's format): for
    /// callers on threads of their own. Async code uses ``open(_:directory:)``.
    ///
    /// - Throws: ``Persistence/StorageError`` when the store is of a newer format or damaged.
    public init(store: any OrderedKeyValueStore) throws {
        rows = try StorageEngine.openSealed(store)
    }

    /// Opens (creating it when new) the store of `backend` in `directory`, on a thread of its own.
    public static func open(_ backend: StorageBackend, directory: String) async throws -> EmbeddedServerStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "rtdb.store.open").async {
                continuation.resume(with: Result {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    return try EmbeddedServerStore(store: try backend.open(directory))
                })
            }
        }
    }

    /// Runs `work` on the store's thread and hands back its result.
    private func onThread<T: Sendable>(_ work: @escaping @Sendable (ChecksummedStore) throws -> T) async throws -> T {
        let rows = self.rows
        return try await withCheckedThrowingContinuation { continuation in
            thread.async { continuation.resume(with: Result { try work(rows) }) }
        }
    }

    public func load() async throws -> Node { try await onThread { try StorageEngine.readTree(at: .root, from: $0) } }

    public func commit(_ change: StoreChange) async throws {
        // The rows are made on the store's thread too, not on the caller's executor: a group of
        // a thousand writes is a thousand subtrees to encode, work the cooperative pool (parsing
        // and deciding the next writes meanwhile) should not carry.
        try await onThread { rows in
            var replacements: [(path: TreePath, node: Node)] = []
            replacements.reserveCapacity(change.changedPaths.count)
            for path in change.changedPaths {
                if let replacement = EmbeddedServerStore.replacement(for: path, in: change.root) {
                    replacements.append(replacement)
                }
            }
            let batch = EmbeddedServerStore.batch(replacing: replacements, settings: change.settings)
            guard !batch.isEmpty else { return }
            try rows.write(batch, durable: true)
        }
    }

    public func setting(named name: String) async throws -> [UInt8]? {
        try await onThread { try $0.get(StorageKeys.settingKey(name)) }
    }

    public func settings(withPrefix prefix: String) async throws -> [StoreSetting] {
        try await onThread { rows in
            var found: [StoreSetting] = []
            try rows.scan(KeyRange(prefix: StorageKeys.settingKey(prefix)), reverse: false) { key, value in
                found.append(StoreSetting(name: String(decoding: key.dropFirst(StorageKeys.settingPrefix.count), as: UTF8.self), value: value))
                return true
            }
            return found
        }
    }

    public func saveSetting(named name: String, _ value: [UInt8]) async throws {
        let batch = EmbeddedServerStore.batch(replacing: [], settings: [StoreSetting(name: name, value: value)])
        try await onThread { try $0.write(batch, durable: true) }
    }

    public func close() async throws { try await onThread { try $0.close() } }

    /// What to write for a change at `path`: the complete new data at the path's anchor, or, when
    /// the data there is gone, the removal of the highest ancestor left empty. `nil` when a
    /// removal under a leaf changed nothing.
    static func replacement(for path: TreePath, in root: Node) -> (path: TreePath, node: Node)? {
        var target = StorageKeys.deepestFittingAncestor(path)
        var node = root.child(at: target)
        if node.isEmpty {
            while let parent = target.parent, root.child(at: parent).isEmpty { target = parent }
            if let parent = target.parent, root.child(at: parent).isLeaf { return nil }
            node = .empty
        }
        return (target, node)
    }

    /// The batch that replaces the stored data at each path with the given node, in order, and
    /// saves `settings` (an empty value removes one), all atomically.
    ///
    /// Each node is the complete new content at its path (the namespace holds the tree), so
    /// nothing is read back. Each path is its own anchor (``replacement(for:in:)``) and no
    /// ancestor of a path holds a leaf in the new data.
    static func batch(replacing replacements: [(path: TreePath, node: Node)], settings: [StoreSetting]) -> WriteBatch {
        var batch = WriteBatch()
        for setting in settings {
            if setting.value.isEmpty {
                batch.delete(StorageKeys.settingKey(setting.name))
            } else {
                batch.put(StorageKeys.settingKey(setting.name), setting.value)
            }
        }
        var delta = 0
        // The ancestors whose (leaf) rows this batch already deletes. A group of writes under one
        // location shares its ancestors: deleting the root's, `users`' and `users/ada`'s row once
        // instead of once per write takes most of the statements out of a group commit. Closed
        // under taking ancestors, so a walk up stops at the first one it meets.
        var deletedAncestors = Set<TreePath>()
        for (path, node) in replacements {
            precondition(StorageKeys.fits(path), "a replacement's path must be its own anchor")
            if deletedAncestors.contains(path) {
                // An earlier path lies below this one, so this replacement adds rows where those
                // deletions happened. The promise above makes none of them a leaf at a later
                // path's ancestor; forgetting them is a safeguard: a later path below deletes its
                // ancestors again.
                deletedAncestors = deletedAncestors.filter { !path.contains($0) }
            }
            var ancestor = path
            while let parent = ancestor.parent, deletedAncestors.insert(parent).inserted {
                batch.delete(StorageKeys.cacheKey(parent))
                ancestor = parent
            }
            batch.deleteRange(KeyRange(prefix: StorageKeys.cacheKey(path)))
            StorageEngine.addRows(of: node, at: path, to: &batch, delta: &delta)
        }
        // A client engine opening these rows counts the cache size again.
        if !replacements.isEmpty { batch.delete(StorageKeys.cacheSize) }
        return batch
    }
}
