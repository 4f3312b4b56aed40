package import CoreTree

/// The engine's row layout, for tools that compare the engine with the raw storage engines
/// underneath it: they store exactly these keys and values through the C library, without the
/// engine (no checksums, no size accounting, no group commit).
extension StorageEngine {
    /// The rows (key, value) the server cache keeps for `node` at `path`, before checksums.
    package static func cacheRows(of node: Node, at path: TreePath) -> [(key: [UInt8], value: [UInt8])] {
        var batch = WriteBatch()
        var delta = 0
        addRows(of: node, at: path, to: &batch, delta: &delta)
        return batch.operations.compactMap { operation in
            guard case .put(let key, let value) = operation else { return nil }
            return (key, value)
        }
    }

    /// The key range holding the server cache's rows at and below `path`.
    package static func cacheRange(at path: TreePath) -> KeyRange {
        KeyRange(prefix: StorageKeys.cacheKey(path))
    }

    /// The key of the overflow row of `anchor` (a path whose rows fit): the row holding, as one
    /// subtree, its descendants whose own keys would be too long.
    package static func overflowRowKey(at anchor: TreePath) -> [UInt8] { StorageKeys.overflowKey(anchor) }

    /// The value of an overflow row holding `subtree` (relative to its anchor).
    package static func overflowRowValue(_ subtree: Node) -> [UInt8] { CacheRows.encodeSubtree(subtree) }

    /// The subtree an overflow row's value holds.
    ///
    /// - Throws: ``StorageError`` (`invalidRecord`) when the value is not the JSON of a tree.
    package static func overflowRowSubtree(_ value: [UInt8]) throws -> Node { try CacheRows.decode(value) }

    /// Where the server-cache row `key` lies: its path's keys (as their UTF-8 bytes, from the
    /// root) and whether it is an overflow row (of that path) rather than a leaf row (at that
    /// path; a priority row is the leaf row of a `.priority` key). `nil` for a row outside the cache.
    package static func cacheRowPlace(_ key: [UInt8]) -> (keys: [ArraySlice<UInt8>], isOverflow: Bool)? {
        guard key.starts(with: StorageKeys.cachePrefix) else { return nil }
        var rest = key[StorageKeys.cachePrefix.count...]
        var isOverflow = false
        if rest.last == StorageKeys.overflowMarker {
            isOverflow = true
            rest = rest.dropLast()
        }
        return (rest.split(separator: StorageKeys.separator), isOverflow)
    }

    /// The row (key, value) that queues `record`, before its checksum.
    package static func userWriteRow(_ record: UserWriteRecord) -> (key: [UInt8], value: [UInt8]) {
        (StorageKeys.writeKey(record.writeId), record.encoded())
    }
}
