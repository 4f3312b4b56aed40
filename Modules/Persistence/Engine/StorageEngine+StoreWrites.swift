package import CoreTree

/// Writing a group of overwrites into the engine's rows without holding the tree they apply to:
/// the server's embedded store keeps its namespace on disk and hands over only what changed.
extension StorageEngine {
    /// Adds to `batch` what makes the stored data at each write's path its node, the writes taken
    /// in order (a later write inside or above an earlier one wins), reading `store` only where a
    /// removal may have left an ancestor empty.
    ///
    /// The writes are first reduced to their outermost paths, each with its final data. Each of
    /// those replaces its key range; a leaf at an ancestor turns into a parent (its row goes, its
    /// priority row stays, as a leaf's priority carries over to children written into it). Data
    /// under a path too long for its own rows is edited inside its anchor's overflow row. After a
    /// removal, each ancestor left with nothing but a priority loses the priority (an empty node
    /// has none), judged at that point of the sequence.
    ///
    /// With `sealed`, every value put carries its checksum already, for writing straight to the
    /// store under the checksums (``ChecksummedStore/writeSealed(_:durable:)``) without the copy
    /// of each value ``ChecksummedStore/write(_:durable:)`` makes. A large group's rows are made on
    /// two threads (see ``addReplacingRows(_:to:sealed:)``), so the caller must not be a thread
    /// of Swift's cooperative pool.
    package static func addWrites(_ writes: [(path: TreePath, node: Node)], reading store: any OrderedKeyValueStore,
                                  to batch: inout WriteBatch, sealed: Bool = false) throws {
        var outermost: [TreePath] = []
        var finalData: [TreePath: Node] = [:]
        var droppedPriorities: [TreePath] = []
        var deletedLeafRows: [TreePath] = []
        var deletedLeafKeys = Set<[UInt8]>()
        for (path, node) in writes {
            // Children written into a leaf make it a parent, also when a later write removes them
            // again; a priority written for a node leaves the node's own row alone.
            if !node.isEmpty, path.lastKey?.isPriorityKey != true {
                let anchor = StorageKeys.deepestFittingAncestor(path)
                for depth in 0..<min(path.depth, anchor.depth + 1) {
                    let ancestor = TreePath(keys: Array(path.keys.prefix(depth)))
                    if deletedLeafKeys.insert(StorageKeys.cacheKey(ancestor)).inserted { deletedLeafRows.append(ancestor) }
                }
            }
            if let container = outermost.first(where: { $0.contains(path) }) {
                finalData[container] = container == path ? node
                    : finalData[container, default: .empty].updatingChild(at: path.relative(to: container)!, to: node)
            } else {
                outermost.removeAll { path.contains($0) }
                outermost.append(path)
                finalData[path] = node
            }
            guard node.isEmpty else { continue }
            var ancestor = outermost.first { $0.contains(path) }!
            while let parent = ancestor.parent, StorageKeys.fits(parent) {
                ancestor = parent
                guard try isEmptyAfterWrites(ancestor, outermost: outermost, finalData: finalData, deletedLeafKeys: deletedLeafKeys,
                                             in: store) else { break }
                droppedPriorities.append(ancestor)
                // A priority written earlier in the group went with the data.
                let priorityPath = ancestor.child(.priority)
                if finalData[priorityPath] != nil { finalData[priorityPath] = .empty }
            }
        }
        for ancestor in deletedLeafRows { batch.delete(StorageKeys.cacheKey(ancestor)) }
        for ancestor in droppedPriorities where !outermost.contains(where: { $0.contains(ancestor) }) {
            batch.delete(StorageKeys.cacheKey(ancestor.child(.priority)))
        }
        var overflowRows: [TreePath: Node] = [:]
        var overflowOrder: [TreePath] = []
        var replacing: [(path: TreePath, node: Node)] = []
        for path in outermost {
            let node = finalData[path] ?? .empty
            let anchor = StorageKeys.deepestFittingAncestor(path)
            if anchor == path {
                replacing.append((path, node))
            } else {
                if overflowRows[anchor] == nil {
                    overflowOrder.append(anchor)
                    overflowRows[anchor] = try store.get(StorageKeys.overflowKey(anchor)).map(CacheRows.decode) ?? .empty
                }
                overflowRows[anchor] = overflowRows[anchor]!.updatingChild(at: path.relative(to: anchor)!, to: node)
            }
        }
        addReplacingRows(replacing, to: &batch, sealed: sealed)
        for anchor in overflowOrder {
            let subtree = overflowRows[anchor]!
            let key = StorageKeys.overflowKey(anchor)
            if subtree.isEmpty {
                batch.delete(key)
            } else {
                var value = CacheRows.encodeSubtree(subtree)
                if sealed { ChecksummedStore.appendChecksum(to: &value, key: key) }
                batch.put(key, value)
            }
        }
        if !outermost.isEmpty { batch.delete(StorageKeys.cacheSize) }
    }

    /// Whether `ancestor` holds nothing once the writes so far are applied: none of them leaves
    /// data below it, and the store has no row below it outside their key ranges but its
    /// priority and leaf rows the writes turned into parents.
    private static func isEmptyAfterWrites(_ ancestor: TreePath, outermost: [TreePath], finalData: [TreePath: Node],
                                           deletedLeafKeys: Set<[UInt8]>, in store: any OrderedKeyValueStore) throws -> Bool {
        var replaced: [KeyRange] = []
        for path in outermost where ancestor.contains(path) {
            if path.lastKey?.isPriorityKey != true, !(finalData[path]?.isEmpty ?? true) { return false }
            if StorageKeys.fits(path) { replaced.append(KeyRange(prefix: StorageKeys.cacheKey(path))) }
        }
        replaced.sort { $0.lowerBound.lexicographicallyPrecedes($1.lowerBound) }
        let priorityKey = StorageKeys.cacheKey(ancestor.child(.priority))
        let range = KeyRange(prefix: StorageKeys.cacheKey(ancestor))
        var start = range.lowerBound
        while true {
            var next: [UInt8]?
            var found = false
            try store.scan(KeyRange(from: start, to: range.upperBound), reverse: false) { key, _ in
                if key == priorityKey || deletedLeafKeys.contains(key) { return true }
                if let skipped = replaced.first(where: { $0.contains(key) }) {
                    next = skipped.upperBound
                    return false
                }
                found = true
                return false
            }
            if found { return false }
            guard let resume = next else { return true }
            start = resume
        }
    }
}
