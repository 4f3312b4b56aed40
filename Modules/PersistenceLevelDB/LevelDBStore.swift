public import Persistence
import CLevelDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``OrderedKeyValueStore`` kept in a LevelDB database in its directory.
///
/// LevelDB's default comparator orders keys byte by byte, as the protocol does. A batch is one
/// LevelDB write batch (one log record, so atomic), written with `sync` when durable; without
/// `sync` it is still written to the log with `write(2)`, so it survives the process being killed.
/// LevelDB has no range delete: a range delete becomes a delete of every key in the range, resolved
/// in batch order against the database and the batch's own earlier puts.
///
/// Every call runs under one lock, so the store may be used from any thread.
/// ``scan(_:reverse:_:)`` reads the range in chunks and calls `body` without holding the lock, so
/// `body` may call back into the store.
public final class LevelDBStore: OrderedKeyValueStore {
    /// The backend's name in errors and in ``StorageBackends``.
    static let backendName = "leveldb"

    private let state: Mutex<LevelDBDatabase?>

    /// Opens the store in `directory`, creating the directory and the database if needed.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/inUse(pid:)`` when another process or handle has
    ///   the directory open, ``StorageError/Code-swift.enum/corrupt`` when LevelDB finds its files
    ///   damaged, or another ``StorageError`` when it cannot open them.
    public init(directory: String) throws {
        let lock = try DirectoryLock(directory: directory, backend: LevelDBStore.backendName)
        state = Mutex(try LevelDBDatabase(directory: directory, lock: lock))
    }

    private func withDatabase<T: Sendable>(_ body: (LevelDBDatabase) throws -> T) throws -> T {
        try state.withLock { database in
            guard let database else {
                throw StorageError(.closed, "the store is closed; open it again to use it", backend: LevelDBStore.backendName)
            }
            return try body(database)
        }
    }

    /// The value stored under `key`, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try withDatabase { try $0.get(key) }
    }

    /// Calls `body` with each entry in `range`, in key order (descending when `reverse`), until it
    /// returns `false`.
    ///
    /// Entries are read in chunks under the store's lock and handed to `body` outside it, so `body`
    /// may call the store; a write made during the scan may be seen by the chunks still to come.
    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try ChunkedScan.run(range, reverse: reverse, readChunk: { remaining in
            try withDatabase { try $0.entries(in: remaining, reverse: reverse) }
        }, body)
    }

    /// Calls `body` with each entry in `range`, in key order, as one LevelDB snapshot holds them:
    /// writes made meanwhile are not seen.
    ///
    /// Each chunk is read under the store's lock by an iterator over the snapshot, and `body`
    /// runs outside the lock. Closing the store releases the snapshot; the next chunk then throws
    /// ``StorageError/Code-swift.enum/closed``.
    public func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        let snapshot = try withDatabase { try $0.beginSnapshot() }
        defer { state.withLock { handle in if let handle { handle.endSnapshot(snapshot) } } }
        try ChunkedScan.run(range, reverse: false, readChunk: { remaining in
            try withDatabase { try $0.entries(in: remaining, snapshot: snapshot) }
        }, body)
    }

    /// Applies every operation of `batch`, in order, as one LevelDB write batch: all or nothing.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/diskFull`` when the disk is full; nothing of the
    ///   batch is applied after any error.
    public func write(_ batch: WriteBatch, durable: Bool) throws {
        try withDatabase { handle in
            // Even an empty batch checks that the store is open.
            guard !batch.isEmpty else { return }
            try handle.write(batch, durable: durable)
        }
    }

    /// Syncs the log to disk and closes the database. Closing twice is harmless.
    public func close() throws {
        try state.withLock { database in
            defer { database = nil }
            try database?.close()
        }
    }
}

extension LevelDBStore: FileCheckingStore {
    /// Reads nothing itself: LevelDB keeps a CRC-32C per table block and verifies it on every read
    /// (``LevelDBOptions``), and the log's records were checked when it was replayed at open
    /// (paranoid checks), so the row walk of ``StoreCheck`` that follows, which reads every
    /// block, is the whole-file check.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/closed`` when the store is closed.
    public func checkFiles() throws -> String {
        try withDatabase { _ in }
        return "table blocks: each block's CRC-32C verified as the rows are read; log records checked at open"
    }
}

extension StorageBackend {
    /// LevelDB: a log-structured merge tree per store directory.
    public static let leveldb = StorageBackend(name: LevelDBStore.backendName) { try LevelDBStore(directory: $0) }
}

// MARK: - The database

/// An open LevelDB database with its options; `deinit` closes it if still open.
///
/// Not thread-safe: ``LevelDBStore`` only touches it under its lock.
final class LevelDBDatabase {
    private var database: OpaquePointer?
    /// Released after `deinit` has closed the database.
    private let settings = LevelDBOptions()
    private var readOptions: OpaquePointer? { settings.readOptions }
    private var writeOptions: OpaquePointer? { settings.writeOptions }
    private var syncWriteOptions: OpaquePointer? { settings.syncWriteOptions }
    /// Held until the database is closed.
    private var lock: DirectoryLock?
    /// The snapshots of snapshot scans in progress (each with read options that name it), by
    /// number; released at close.
    private var snapshots: [Int: (snapshot: OpaquePointer, readOptions: OpaquePointer)] = [:]
    private var lastSnapshot = 0

    init(directory: String, lock: DirectoryLock) throws {
        self.lock = lock
        // Damage is an error, not skipped: see ``LevelDBOptions`` (paranoid checks, verified reads).
        var error: UnsafeMutablePointer<CChar>?
        database = leveldb_open(settings.options, directory, &error)
        try check(error, "cannot open the LevelDB database in \(directory)")
        if database == nil { throw StorageError(.engine, "cannot open the LevelDB database in \(directory)", backend: LevelDBStore.backendName) }
    }

    deinit {
        try? close()
    }

    /// Syncs the log with an empty synced batch, closes the database, then unlocks the directory.
    func close() throws {
        defer { lock = nil }
        guard let database else { return }
        for number in Array(snapshots.keys) { endSnapshot(number) }
        var error: UnsafeMutablePointer<CChar>?
        if let empty = leveldb_writebatch_create() {
            leveldb_write(database, syncWriteOptions, empty, &error)
            leveldb_writebatch_destroy(empty)
        }
        leveldb_close(database)
        self.database = nil
        try check(error, "cannot sync the database to disk")
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        guard let database else { throw closedError() }
        var length = 0
        var error: UnsafeMutablePointer<CChar>?
        let value = key.withChars { leveldb_get(database, readOptions, $0, $1, &length, &error) }
        try check(error, "cannot read a key")
        guard let value else { return nil }
        defer { leveldb_free(value) }
        return [UInt8](UnsafeRawBufferPointer(start: value, count: length))
    }

    func entries(in range: KeyRange, reverse: Bool) throws -> ScanChunk {
        try entries(in: range, reverse: reverse, readOptions: readOptions)
    }

    /// A chunk of `range`, read with `readOptions` (a snapshot's, or the usual ones).
    private func entries(in range: KeyRange, reverse: Bool, readOptions: OpaquePointer?) throws -> ScanChunk {
        try withIterator(readOptions: readOptions) { iterator in
            if !reverse {
                range.lowerBound.withChars { leveldb_iter_seek(iterator, $0, $1) }
            } else if let upperBound = range.upperBound {
                // The last key below the upper bound: the one before the first key at or above it.
                upperBound.withChars { leveldb_iter_seek(iterator, $0, $1) }
                if leveldb_iter_valid(iterator) != 0 { leveldb_iter_prev(iterator) } else { leveldb_iter_seek_to_last(iterator) }
            } else {
                leveldb_iter_seek_to_last(iterator)
            }
            var chunk = ScanChunk()
            while leveldb_iter_valid(iterator) != 0 {
                let key = LevelDBDatabase.key(of: iterator)
                let inRange =
                    reverse
                    ? !key.lexicographicallyPrecedes(range.lowerBound)
                    : range.upperBound.map { key.lexicographicallyPrecedes($0) } ?? true
                guard inRange else { break }
                var length = 0
                let value = [UInt8](UnsafeRawBufferPointer(start: leveldb_iter_value(iterator, &length), count: length))
                guard chunk.append(key: key, value: value) else { break }
                if reverse { leveldb_iter_prev(iterator) } else { leveldb_iter_next(iterator) }
            }
            return chunk
        }
    }

    /// Takes a snapshot for a snapshot scan; returns its number.
    func beginSnapshot() throws -> Int {
        guard let database else { throw closedError() }
        guard let snapshot = leveldb_create_snapshot(database), let options = leveldb_readoptions_create() else {
            throw StorageError(.engine, "cannot take a LevelDB snapshot", backend: LevelDBStore.backendName)
        }
        leveldb_readoptions_set_verify_checksums(options, 1)
        // One pass over everything: keep the block cache for the server's own reads.
        leveldb_readoptions_set_fill_cache(options, 0)
        leveldb_readoptions_set_snapshot(options, snapshot)
        lastSnapshot += 1
        snapshots[lastSnapshot] = (snapshot, options)
        return lastSnapshot
    }

    /// The next chunk of a snapshot scan, read from its snapshot.
    func entries(in range: KeyRange, snapshot: Int) throws -> ScanChunk {
        guard let taken = snapshots[snapshot] else {
            throw StorageError(.closed, "the snapshot scan ended: the store was closed", backend: LevelDBStore.backendName)
        }
        return try entries(in: range, reverse: false, readOptions: taken.readOptions)
    }

    /// Releases a snapshot scan's snapshot, if the store has not already.
    func endSnapshot(_ snapshot: Int) {
        guard let taken = snapshots.removeValue(forKey: snapshot) else { return }
        leveldb_readoptions_destroy(taken.readOptions)
        if let database { leveldb_release_snapshot(database, taken.snapshot) }
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        guard let database else { throw closedError() }
        guard let writeBatch = leveldb_writebatch_create() else {
            throw StorageError(.engine, "cannot create a LevelDB write batch", backend: LevelDBStore.backendName)
        }
        defer { leveldb_writebatch_destroy(writeBatch) }
        // LevelDB applies a batch in order, but its reads do not see the batch being built. A range
        // delete therefore deletes the keys the database holds in the range plus the keys this batch
        // put there earlier; deleting a key that is already gone is harmless, and a later put wins.
        // Only a batch with a range delete keeps its keys for that (hashing every key of a bulk
        // load's batches took a third of the writing thread).
        let hasRangeDelete = batch.operations.contains { if case .deleteRange = $0 { true } else { false } }
        var putKeys = Set<[UInt8]>()
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                key.withChars { key, keyLength in
                    value.withChars { leveldb_writebatch_put(writeBatch, key, keyLength, $0, $1) }
                }
                if hasRangeDelete { putKeys.insert(key) }
            case .delete(let key):
                key.withChars { leveldb_writebatch_delete(writeBatch, $0, $1) }
            case .deleteRange(let range):
                let batchKeys = putKeys.filter(range.contains)
                putKeys.subtract(batchKeys)
                for key in try keys(in: range) + batchKeys {
                    key.withChars { leveldb_writebatch_delete(writeBatch, $0, $1) }
                }
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        leveldb_write(database, durable ? syncWriteOptions : writeOptions, writeBatch, &error)
        try check(error, "cannot write a batch")
    }

    // MARK: Helpers

    /// The keys the database holds in `range`, in order.
    private func keys(in range: KeyRange) throws -> [[UInt8]] {
        try withIterator { iterator in
            var keys: [[UInt8]] = []
            range.lowerBound.withChars { leveldb_iter_seek(iterator, $0, $1) }
            while leveldb_iter_valid(iterator) != 0 {
                let key = LevelDBDatabase.key(of: iterator)
                if let upperBound = range.upperBound, !key.lexicographicallyPrecedes(upperBound) { break }
                keys.append(key)
                leveldb_iter_next(iterator)
            }
            return keys
        }
    }

    /// Runs `body` with a new iterator over the database, then reports the iterator's error, if any.
    private func withIterator<T>(readOptions: OpaquePointer? = nil, _ body: (OpaquePointer) throws -> T) throws -> T {
        guard let database else { throw closedError() }
        let readOptions = readOptions ?? self.readOptions
        guard let iterator = leveldb_create_iterator(database, readOptions) else {
            throw StorageError(.engine, "cannot create a LevelDB iterator", backend: LevelDBStore.backendName)
        }
        defer { leveldb_iter_destroy(iterator) }
        let result = try body(iterator)
        var error: UnsafeMutablePointer<CChar>?
        leveldb_iter_get_error(iterator, &error)
        try check(error, "cannot read a range")
        return result
    }

    /// A copy of the key the iterator stands on.
    private static func key(of iterator: OpaquePointer) -> [UInt8] {
        var length = 0
        return [UInt8](UnsafeRawBufferPointer(start: leveldb_iter_key(iterator, &length), count: length))
    }

    private func closedError() -> StorageError {
        StorageError(.closed, "the store is closed", backend: LevelDBStore.backendName)
    }

    /// Throws a ``StorageError`` for LevelDB's error text, if any, and frees the text.
    private func check(_ error: UnsafeMutablePointer<CChar>?, _ context: @autoclosure () -> String) throws {
        guard let error else { return }
        let text = String(cString: error)
        leveldb_free(error)
        var code = StorageError.Code.engine
        var status: Int32?
        var advice = ""
        if text.hasPrefix("Corruption") {
            code = .corrupt
            advice = "; the LevelDB files are damaged: remove the store directory to start afresh"
        } else if text.contains("No space") || text.contains("File too large") || text.contains("quota exceeded") {
            // ENOSPC, EFBIG (a file size limit) and EDQUOT all mean the write did not fit.
            code = .diskFull
            status = text.contains("No space") ? ENOSPC : text.contains("File too large") ? EFBIG : EDQUOT
            advice = "; free some disk space and retry"
        } else if text.contains("lock") && (text.contains("already held") || text.contains("Resource temporarily unavailable")) {
            code = .inUse(pid: nil)
            advice = "; close the other handle first"
        } else if text.hasPrefix("IO error") {
            code = .io
        }
        throw StorageError(code, "\(context()): \(text)\(advice)", backend: LevelDBStore.backendName, engineStatus: status)
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a C character pointer (never null, even when empty) and a length.
    package func withChars<R>(_ body: (UnsafePointer<CChar>, Int) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer { bytes in
            try bytes.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return try withUnsafePointer(to: CChar(0)) { try body($0, 0) } }
                return try body(base, chars.count)
            }
        }
    }
}
