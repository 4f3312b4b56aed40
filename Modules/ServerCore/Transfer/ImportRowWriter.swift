import CoreTree
import Persistence

/// Writes the pieces of a streamed document (``CoreTree/JSONStreamItem``) into a fresh store as
/// the embedded store's rows, in large batches that are not synced: the importer syncs once, at
/// the end, and a store that was never switched in is thrown away. The batches are written by a
/// ``BatchWriterThread`` while the next ones are made, with their checksums made here, beside the
/// values (not copied again by the ``Persistence/ChecksummedStore``).
///
/// A piece that replaces nothing (every piece of an export) is turned into rows and added to the
/// batch without reading anything. The rare piece that may replace earlier ones (a repeated
/// member name), a priority that belongs to nothing any more, and paths too long for their own
/// rows (they share an overflow row) are applied as sets against what the store holds, after
/// the batch so far is written.
struct ImportRowWriter {
    /// The staging store, seen through its row checksums.
    private let rows: ChecksummedStore
    private let writer: BatchWriterThread
    /// A batch is written once its rows reach about this many bytes.
    private let batchBytes: Int
    /// The server time server values (`{".sv": "timestamp"}`) resolve to.
    private let serverTime: Int64
    private var batch = WriteBatch()
    private var pendingBytes = 0

    /// Rows written so far, and their bytes (keys and values, before checksums).
    private(set) var rowCount = 0
    private(set) var rowBytes = 0

    /// A writer into `rows`, which starts a ``BatchWriterThread``; end it with ``finish()``.
    init(rows: ChecksummedStore, batchBytes: Int, serverTime: Int64) {
        self.rows = rows
        writer = BatchWriterThread(store: rows.base)
        self.batchBytes = batchBytes
        self.serverTime = serverTime
    }

    /// Adds a row copied as it is (a setting of the store being replaced) to the next batch.
    mutating func copySetting(key: [UInt8], value: [UInt8]) {
        batch.put(key, ChecksummedStore.seal(key: key, value: value))
    }

    /// Adds the removal of a row to the next batch.
    mutating func removeRow(key: [UInt8]) {
        batch.delete(key)
    }

    /// Applies one piece.
    ///
    /// - Throws: what the store throws; ``CoreTree/CoreTreeError`` when a server value in it
    ///   cannot be resolved.
    mutating func write(_ item: JSONStreamItem) throws {
        var item = item
        if item.containsServerValues && ServerValue.containsPlaceholder(item.node) {
            item.node = try ServerValue.resolve(item.node, existing: .empty, serverTime: serverTime, at: item.path)
        }
        if !item.replaces && StorageKeys.fits(item.path) {
            let before = batch.operations.count
            StorageEngine.addRows(of: item.node, at: item.path, to: &batch, delta: &pendingBytes, sealed: true)
            rowCount += batch.operations.count - before
            if pendingBytes >= batchBytes { try flush(durable: false) }
            return
        }
        // A set reads the store: everything before it must be written first.
        try flush(durable: false)
        try writer.drain()
        var set = WriteBatch()
        var bytes = 0
        if !StorageKeys.fits(item.path) {
            try addOverflowSet(item, to: &set, bytes: &bytes)
        } else if item.isPriority {
            try addPrioritySet(item, to: &set, bytes: &bytes)
        } else {
            // The anchor of the set is the path itself: it fits.
            set = EmbeddedServerStore.batch(replacing: [(item.path, item.node)], settings: [])
            for case .put(let key, let value) in set.operations { bytes += key.count + value.count }
        }
        rowCount += set.operations.count(where: { if case .put = $0 { true } else { false } })
        rowBytes += bytes
        if !set.isEmpty { try rows.write(set, durable: false) }
    }

    /// The set of a piece whose path is too long for rows of its own: a change to the overflow
    /// row of its deepest ancestor that fits.
    private func addOverflowSet(_ item: JSONStreamItem, to set: inout WriteBatch, bytes: inout Int) throws {
        let anchor = StorageKeys.deepestFittingAncestor(item.path)
        let key = StorageEngine.overflowRowKey(at: anchor)
        var subtree = try rows.get(key).map(StorageEngine.overflowRowSubtree) ?? .empty
        // A priority of nothing is dropped by the update itself (an empty node has none).
        subtree = subtree.updatingChild(at: item.path.relative(to: anchor)!, to: item.node)
        if subtree.isEmpty {
            set.delete(key)
        } else {
            let value = StorageEngine.overflowRowValue(subtree)
            set.put(key, value)
            bytes += key.count + value.count
        }
    }

    /// The set of the priority of an object that may have been emptied: its row, unless nothing
    /// is left at the object (the priority of nothing is dropped).
    private func addPrioritySet(_ item: JSONStreamItem, to set: inout WriteBatch, bytes: inout Int) throws {
        let ownRow = StorageKeys.cacheKey(item.path)
        var holdsData = false
        try rows.base.scan(StorageEngine.cacheRange(at: item.path.parent!), reverse: false) { key, _ in
            holdsData = key != ownRow
            return !holdsData
        }
        if holdsData && !item.node.isEmpty {
            StorageEngine.addRows(of: item.node, at: item.path, to: &set, delta: &bytes)
        } else {
            set.delete(ownRow)
        }
    }

    /// Hands the batch so far to the writer thread; `durable` syncs it (and everything before it).
    mutating func flush(durable: Bool) throws {
        guard !batch.isEmpty || durable else { return }
        batch = try writer.submit(batch, durable: durable)
        rowBytes += pendingBytes
        pendingBytes = 0
    }

    /// Writes everything handed over and ends the writer thread.
    ///
    /// - Throws: the error of a write that failed.
    func finish() throws {
        try writer.stop()
    }
}
