import CoreTree
import Persistence

/// Writes the pieces of a streamed document (``CoreTree/JSONStreamItem``) into a fresh store as
/// the embedded store's rows, in large batches that are not synced: the importer syncs once, at
/// the end, and a store that was never switched in is thrown away. An ``ImportWriterThread``
/// writes them while the next pieces are parsed, and turns pieces into rows itself when it has
/// nothing else to do. Rows are sealed with their checksums as they are made (not copied again
/// by the ``Persistence/ChecksummedStore``).
///
/// A piece that replaces nothing (every piece of an export) is turned into rows and added to a
/// batch without reading anything. The rare piece that may replace earlier ones (a repeated
/// member name), a priority that belongs to nothing any more, and paths too long for their own
/// rows (they share an overflow row) are applied as sets against what the store holds, once
/// everything before them is written.
struct ImportRowWriter {
    /// The staging store, seen through its row checksums.
    private let rows: ChecksummedStore
    private let writer: ImportWriterThread
    /// A batch is written once its rows reach about this many bytes.
    private let batchBytes: Int
    /// The server time server values (`{".sv": "timestamp"}`) resolve to.
    private let serverTime: Int64
    /// Pieces that replace nothing, not yet turned into rows.
    private var pieces: [JSONStreamItem] = []
    private var batch = WriteBatch()
    private var pendingBytes = 0
    /// Rows this thread made, and their bytes (keys and values, before checksums).
    private var ownRowCount = 0
    private var ownRowBytes = 0

    /// Rows written so far, and their bytes (keys and values, before checksums).
    var rowCount: Int { ownRowCount + writer.encodedRows.count }
    var rowBytes: Int { ownRowBytes + writer.encodedRows.bytes }

    /// A writer into `rows`, which starts an ``ImportWriterThread``; end it with ``finish()``.
    init(rows: ChecksummedStore, batchBytes: Int, serverTime: Int64) {
        self.rows = rows
        writer = ImportWriterThread(store: rows.base, serverTime: serverTime)
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

    /// Adds the sealed rows of `piece` (one that replaces nothing, at a path that fits) to
    /// `batch`, its server values resolved to `serverTime`, and their bytes to `bytes`.
    static func addRows(of piece: JSONStreamItem, serverTime: Int64, to batch: inout WriteBatch, bytes: inout Int) throws {
        var node = piece.node
        if piece.containsServerValues && ServerValue.containsPlaceholder(node) {
            node = try ServerValue.resolve(node, existing: .empty, serverTime: serverTime, at: piece.path)
        }
        StorageEngine.addRows(of: node, at: piece.path, to: &batch, delta: &bytes, sealed: true)
    }

    /// Applies one piece.
    ///
    /// - Throws: what the store throws; ``CoreTree/CoreTreeError`` when a server value in it
    ///   cannot be resolved.
    mutating func write(_ item: JSONStreamItem) throws {
        if !item.replaces && StorageKeys.fits(item.path) {
            pieces.append(item)
            return
        }
        // A set reads the store: everything before it must be written first.
        try flush(durable: false)
        try writer.drain()
        var item = item
        if item.containsServerValues && ServerValue.containsPlaceholder(item.node) {
            item.node = try ServerValue.resolve(item.node, existing: .empty, serverTime: serverTime, at: item.path)
        }
        var set = WriteBatch()
        var bytes = 0
        if !StorageKeys.fits(item.path) {
            try addOverflowSet(item, to: &set, bytes: &bytes)
        } else if item.isPriority {
            try addPrioritySet(item, to: &set, bytes: &bytes)
        } else {
            // The anchor of the set is the path itself: it fits.
            try StorageEngine.addWrites([(item.path, item.node)], reading: rows, to: &set)
            for case .put(let key, let value) in set.operations { bytes += key.count + value.count }
        }
        ownRowCount += set.operations.count(where: { if case .put = $0 { true } else { false } })
        ownRowBytes += bytes
        if !set.isEmpty { try rows.write(set, durable: false) }
    }

    /// Hands the pieces read so far to the writer thread when it has nothing to do, else turns
    /// them into rows here (and hands over the batch once it is large): called after each chunk
    /// of the document, it shares the encoding between the two threads as the store's speed
    /// allows.
    mutating func endOfChunk() throws {
        guard !pieces.isEmpty else { return }
        if writer.isIdle {
            try writer.submit(pieces: pieces)
            pieces = []
            return
        }
        try encodePieces()
        if pendingBytes >= batchBytes { try flush(durable: false) }
    }

    /// Turns the pieces waiting into rows of the batch.
    private mutating func encodePieces() throws {
        let before = batch.operations.count
        for piece in pieces { try ImportRowWriter.addRows(of: piece, serverTime: serverTime, to: &batch, bytes: &pendingBytes) }
        ownRowCount += batch.operations.count - before
        pieces.removeAll(keepingCapacity: true)
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

    /// Hands everything waiting to the writer thread as one batch; `durable` syncs it (and
    /// everything before it).
    mutating func flush(durable: Bool) throws {
        try encodePieces()
        guard !batch.isEmpty || durable else { return }
        batch = try writer.submit(batch, durable: durable)
        ownRowBytes += pendingBytes
        pendingBytes = 0
    }

    /// Writes everything handed over and ends the writer thread.
    ///
    /// - Throws: the error of a write that failed.
    func finish() throws {
        try writer.stop()
    }
}
