public import CoreTree

extension StorageEngine {
    /// The path at which data written at `path` is replaced as a whole by
    /// ``replaceData(_:durable:)``: `path` itself, or its deepest ancestor whose rows fit under the
    /// key length limit when `path` is too long for rows of its own.
    public static func replacementAnchor(for path: TreePath) -> TreePath {
        StorageKeys.deepestFittingAncestor(path)
    }

    /// Replaces the stored data at each path with the given node, all in one atomic batch, in order.
    ///
    /// This is for a caller that holds the authoritative data in memory (a server): each node is
    /// the complete new content at its path, so nothing is read back from the store. The caller
    /// promises that each path is its own ``replacementAnchor(for:)`` and that no ancestor of a
    /// path holds a leaf in the new data (for a removal, pass the highest ancestor that became
    /// empty). The running cache size is not maintained here: the stored size is removed, so an
    /// engine that accounts the size counts it again when it opens.
    /// The caller serialises its own commits (one group of writes at a time), so the batch goes to
    /// the store directly, without the group commit that shares syncs between queue writers.
    ///
    /// - Parameters:
    ///   - settings: settings written in the same batch (an empty value removes the setting).
    ///   - durable: whether the batch is synced to disk before this returns.
    public func replaceData(_ replacements: [(path: TreePath, node: Node)], settings: [(name: String, value: [UInt8])] = [], durable: Bool) throws {
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
        // instead of once per write takes most of the statements out of a server's group commit.
        // Closed under taking ancestors, so a walk up stops at the first one it meets.
        var deletedAncestors = Set<TreePath>()
        for (path, node) in replacements {
            precondition(StorageKeys.fits(path), "replaceData needs paths that are their own replacement anchor")
            if deletedAncestors.contains(path) {
                // An earlier path lies below this one, so this replacement adds rows where those
                // deletions happened. Under the promise above none of them is a leaf at a later
                // path's ancestor, but the set forgets them anyway: a later path below deletes
                // its ancestors again, as it did before the set existed.
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
        guard !batch.isEmpty else { return }
        if !replacements.isEmpty { batch.delete(StorageKeys.cacheSize) }
        try store.write(batch, durable: durable)
    }

    /// A setting stored beside the data (for example a server's security rules), or `nil`.
    public func setting(named name: String) throws -> [UInt8]? {
        try store.get(StorageKeys.settingKey(name))
    }

    /// Every setting whose name starts with `prefix`.
    public func settings(withPrefix prefix: String) throws -> [(name: String, value: [UInt8])] {
        var found: [(name: String, value: [UInt8])] = []
        let keyPrefix = StorageKeys.settingKey(prefix)
        try store.scan(KeyRange(prefix: keyPrefix), reverse: false) { key, value in
            found.append((String(decoding: key.dropFirst(StorageKeys.settingPrefix.count), as: UTF8.self), value))
            return true
        }
        return found
    }

    /// Stores a setting durably (an empty value removes it).
    public func saveSetting(named name: String, _ value: [UInt8]) throws {
        var batch = WriteBatch()
        if value.isEmpty {
            batch.delete(StorageKeys.settingKey(name))
        } else {
            batch.put(StorageKeys.settingKey(name), value)
        }
        try commitShared(batch)
    }
}
