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

    /// The row (key, value) that queues `record`, before its checksum.
    package static func userWriteRow(_ record: UserWriteRecord) -> (key: [UInt8], value: [UInt8]) {
        (StorageKeys.writeKey(record.writeId), record.encoded())
    }
}
