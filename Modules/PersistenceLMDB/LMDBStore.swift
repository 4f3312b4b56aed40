public import Persistence
package import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``OrderedKeyValueStore`` kept in an LMDB environment (`data.mdb`, `lock.mdb`) in its directory.
///
/// One unnamed database with LMDB's default byte-wise key order, which is the protocol's. The
/// environment is opened with `MDB_NOTLS` and `MDB_NOSYNC`: every commit is written to the file
/// (so it survives the process being killed) and a durable batch is then flushed with
/// `mdb_env_sync`. The memory map starts at 64 MiB and doubles whenever a batch does not fit.
///
/// Keys are 1 to 511 bytes (LMDB's limit, `mdb_env_get_maxkeysize`); a longer or empty key in a put
/// throws. Every call runs under one lock, and every transaction begins and ends inside one call,
/// so the map can be resized safely. ``scan(_:reverse:_:)`` reads the range in chunks, each in a
/// short read transaction, and calls `body` without holding the lock, so `body` may call back into
/// the store.
public final class LMDBStore: OrderedKeyValueStore {
    /// The backend's name in errors and in ``StorageBackends``.
    static let backendName = "lmdb"
    /// The memory map's size when a new store is opened.
    public static let initialMapSize = 64 << 20

    private let state: Mutex<LMDBEnvironment?>
    /// The store's directory.
    private let directory: String

    /// Opens the store in `directory`, creating the directory and the environment if needed.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/inUse(pid:)`` when another process or handle has
    ///   the directory open, ``StorageError/Code-swift.enum/corrupt`` when the files are not an
    ///   LMDB environment of this version, or another ``StorageError`` when LMDB cannot open them.
    public init(directory: String) throws {
        let lock = try DirectoryLock(directory: directory, backend: LMDBStore.backendName)
        self.directory = directory
        try LMDBEnvironment.createDataFileIfAbsent(in: directory)
        try LMDBFileCheck.verify(directory: directory, walkingTrees: LMDBStore.walksTreesAtOpen)
        state = Mutex(try LMDBEnvironment(directory: directory, lock: lock))
    }

    private func withEnvironment<T: Sendable>(_ body: (LMDBEnvironment) throws -> T) throws -> T {
        try state.withLock { environment in
            guard let environment else {
                throw StorageError(.closed, "the store is closed; open it again to use it", backend: LMDBStore.backendName)
            }
            return try body(environment)
        }
    }

    /// The value stored under `key`, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try withEnvironment { try $0.get(key) }
    }

    /// Calls `body` with each entry in `range`, in key order (descending when `reverse`), until it
    /// returns `false`.
    ///
    /// Entries are read in chunks under the store's lock and handed to `body` outside it, so `body`
    /// may call the store; a write made during the scan may be seen by the chunks still to come.
    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try ChunkedScan.run(range, reverse: reverse, readChunk: { remaining in
            try withEnvironment { try $0.entries(in: remaining, reverse: reverse) }
        }, body)
    }

    /// Calls `body` with each entry in `range`, in key order, as one read-only transaction sees
    /// them: writes made meanwhile are not seen.
    ///
    /// The transaction lives for the whole scan; each chunk is read under the store's lock with a
    /// cursor of its own (a resize of the map moves the pages a cursor points at, never what the
    /// transaction shows), and `body` runs outside the lock. Closing the store aborts the
    /// transaction; the next chunk then throws ``StorageError/Code-swift.enum/closed``.
    public func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        let snapshot = try withEnvironment { try $0.beginSnapshot() }
        defer { state.withLock { handle in if let handle { handle.endSnapshot(snapshot) } } }
        try ChunkedScan.run(range, reverse: false, readChunk: { remaining in
            try withEnvironment { try $0.entries(in: remaining, snapshot: snapshot) }
        }, body)
    }

    /// Applies every operation of `batch`, in order, in one write transaction: all or nothing.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/keyTooLong(length:limit:)`` for a put whose key is
    ///   longer than LMDB accepts, ``StorageError/Code-swift.enum/diskFull`` when the disk is full
    ///   or the map cannot grow; nothing of the batch is applied after any error.
    public func write(_ batch: WriteBatch, durable: Bool) throws {
        try withEnvironment { handle in
            // Even an empty batch checks that the store is open.
            guard !batch.isEmpty else { return }
            try handle.write(batch, durable: durable)
        }
    }

    /// Flushes the environment to disk and closes it. Closing twice is harmless.
    public func close() throws {
        try state.withLock { environment in
            defer { environment = nil }
            try environment?.close()
        }
    }
}

extension LMDBStore: FileCheckingStore {
    /// Whether opening walks both trees of the data file before LMDB maps it (see the README's
    /// "Damage on disk": LMDB follows whatever the file says, so a damaged page it reaches can
    /// crash the process; the walk refuses such a file first).
    static let walksTreesAtOpen = true

    /// Checks the meta pages and walks both B+trees of the data file with bounds-checked reads
    /// (``LMDBTreeCheck``), while the store stays in use.
    ///
    /// The walk reads the file beside LMDB, without its lock: a commit made meanwhile can reuse
    /// pages the walk has yet to reach, which then look damaged. Damage found so is checked again
    /// with the store's lock held (no commit can run); only damage found then is reported.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/corrupt`` naming the page and what is wrong with it.
    public func checkFiles() throws -> String {
        let pages: UInt64
        do {
            pages = try LMDBFileCheck.verify(directory: directory)
        } catch let error as StorageError where error.code == .corrupt {
            pages = try state.withLock { environment in
                guard environment != nil else {
                    throw StorageError(.closed, "the store was closed during its check", backend: LMDBStore.backendName)
                }
                return try LMDBFileCheck.verify(directory: directory)
            }
        }
        return "meta pages and both B+trees walked: \(pages) pages"
    }
}

extension StorageBackend {
    /// LMDB: a memory-mapped B+tree environment per store directory.
    public static let lmdb = StorageBackend(name: LMDBStore.backendName) { try LMDBStore(directory: $0) }
}

// MARK: - The environment

/// An open LMDB environment and its one database; `deinit` closes it if still open.
///
/// Not thread-safe: ``LMDBStore`` only touches it under its lock, so no transaction is active
/// while the map is resized.
final class LMDBEnvironment {
    private var environment: OpaquePointer?
    private var database: MDB_dbi = 0
    private var mapSize = LMDBStore.initialMapSize
    /// The longest key LMDB accepts.
    private var maxKeySize = 511
    /// A read-only transaction kept between reads (reset, not aborted) to save setting one up.
    private var reader: OpaquePointer?
    /// The read-only transactions of snapshot scans in progress, by number; aborted at close.
    private var snapshots: [Int: OpaquePointer] = [:]
    private var lastSnapshot = 0
    /// Whether `mdb_env_open` succeeded (else closing must not flush).
    private var isOpen = false
    /// Held until the environment is closed.
    private var lock: DirectoryLock?
    /// The environment's directory.
    private let directory: String

    init(directory: String, lock: DirectoryLock) throws {
        self.lock = lock
        self.directory = directory
        try check(mdb_env_create(&environment), "cannot create an LMDB environment")
        try check(mdb_env_set_mapsize(environment, mapSize), "cannot set the map size")
        let flags = UInt32(MDB_NOTLS | MDB_NOSYNC)
        try check(mdb_env_open(environment, directory, flags, 0o644), "cannot open the LMDB environment in \(directory)")
        isOpen = true
        var dead: Int32 = 0
        _ = mdb_reader_check(environment, &dead)  // frees reader slots of crashed processes
        var info = MDB_envinfo()
        try check(mdb_env_info(environment, &info), "cannot read the environment's information")
        mapSize = max(mapSize, info.me_mapsize)  // an existing, larger file keeps its map size
        maxKeySize = Int(mdb_env_get_maxkeysize(environment))
        var transaction: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, 0, &transaction), "cannot begin a transaction")
        let status = mdb_dbi_open(transaction, nil, 0, &database)
        guard status == 0 else {
            mdb_txn_abort(transaction)
            throw failure(status, "cannot open the database")
        }
        try check(mdb_txn_commit(transaction), "cannot commit a transaction")
    }

    deinit { try? close() }

    /// Makes a new environment's data file whole before it appears: LMDB creates `data.mdb`
    /// empty and then writes its meta pages, so a process killed in between left an empty file
    /// that could not be told from a damaged one. The file is made in a staging directory, synced,
    /// and renamed into place, so an empty `data.mdb` only ever means damage.
    static func createDataFileIfAbsent(in directory: String) throws {
        let dataFile = directory + "/data.mdb"
        guard access(dataFile, F_OK) != 0 else { return }
        let staging = directory + "/creating.tmp"
        func removeStaging() {
            _ = unlink(staging + "/data.mdb")
            _ = unlink(staging + "/lock.mdb")
            _ = rmdir(staging)
        }
        removeStaging()  // left by a process killed while creating
        guard mkdir(staging, 0o755) == 0 else {
            throw StorageError(.io, "cannot create \(staging): errno \(errno)", backend: LMDBStore.backendName, engineStatus: errno)
        }
        defer { removeStaging() }
        func check(_ status: Int32, _ context: String) throws {
            if status != 0 {
                throw StorageError(.engine, "\(context): \(String(cString: mdb_strerror(status)))", backend: LMDBStore.backendName,
                                   engineStatus: status)
            }
        }
        var environment: OpaquePointer?
        try check(mdb_env_create(&environment), "cannot create an LMDB environment")
        defer { mdb_env_close(environment) }
        try check(mdb_env_set_mapsize(environment, LMDBStore.initialMapSize), "cannot set the map size")
        try check(mdb_env_open(environment, staging, 0, 0o644), "cannot create the LMDB environment in \(staging)")
        try check(mdb_env_sync(environment, 1), "cannot flush the new environment to disk")
        guard rename(staging + "/data.mdb", dataFile) == 0 else {
            throw StorageError(.io, "cannot move the new data file into \(directory): errno \(errno)", backend: LMDBStore.backendName,
                               engineStatus: errno)
        }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY)
        if descriptor >= 0 {
            _ = fsync(descriptor)  // the rename itself survives a crash
            _ = Glibc.close(descriptor)
        }
    }

    /// Flushes the environment to disk and closes it, then unlocks the directory.
    func close() throws {
        defer { lock = nil }
        guard let environment else { return }
        for transaction in snapshots.values { mdb_txn_abort(transaction) }
        snapshots = [:]
        endReader()
        let status = isOpen ? mdb_env_sync(environment, 1) : 0
        mdb_env_close(environment)
        self.environment = nil
        try check(status, "cannot flush the environment to disk")
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        guard !key.isEmpty, key.count <= maxKeySize else { return nil }  // LMDB cannot hold such a key
        return try withReader { transaction in
            var value = MDB_val()
            let status = key.withValue { mdb_get(transaction, database, &$0, &value) }
            if status == MDB_NOTFOUND { return nil }
            try check(status, "cannot read a key")
            return value.bytes
        }
    }

    func entries(in range: KeyRange, reverse: Bool) throws -> ScanChunk {
        try withReader { try entries(in: range, reverse: reverse, transaction: $0) }
    }

    /// Begins the read-only transaction of a snapshot scan; returns its number.
    func beginSnapshot() throws -> Int {
        var transaction: OpaquePointer?
        try check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction), "cannot begin a read transaction")
        guard let transaction else { throw failure(EINVAL, "cannot begin a read transaction") }
        lastSnapshot += 1
        snapshots[lastSnapshot] = transaction
        return lastSnapshot
    }

    /// The next chunk of a snapshot scan, read in its transaction.
    func entries(in range: KeyRange, snapshot: Int) throws -> ScanChunk {
        guard let transaction = snapshots[snapshot] else {
            throw StorageError(.closed, "the snapshot scan ended: the store was closed", backend: LMDBStore.backendName)
        }
        return try entries(in: range, reverse: false, transaction: transaction)
    }

    /// Ends a snapshot scan (aborts its transaction), if the store has not already.
    func endSnapshot(_ snapshot: Int) {
        if let transaction = snapshots.removeValue(forKey: snapshot) { mdb_txn_abort(transaction) }
    }

    /// A chunk of `range` read in `transaction` with a cursor opened and closed here.
    private func entries(in range: KeyRange, reverse: Bool, transaction: OpaquePointer?) throws -> ScanChunk {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(transaction, database, &cursor), "cannot open a cursor")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        func move(_ operation: MDB_cursor_op) -> Int32 { mdb_cursor_get(cursor, &key, &value, operation) }
        func seek(_ target: [UInt8]) -> Int32 {
            target.withValue { bound in
                key = bound
                return move(MDB_SET_RANGE)
            }
        }

        var status: Int32
        if !reverse {
            status = range.lowerBound.isEmpty ? move(MDB_FIRST) : seek(range.lowerBound)
        } else if let upperBound = range.upperBound {
            guard !upperBound.isEmpty else { return ScanChunk() }  // no key sorts before the empty key
            // The last key below the upper bound: the one before the first key at or above it.
            status = seek(upperBound)
            status = status == 0 ? move(MDB_PREV) : status == MDB_NOTFOUND ? move(MDB_LAST) : status
        } else {
            status = move(MDB_LAST)
        }

        var chunk = ScanChunk()
        while status == 0 {
            let entryKey = key.bytes
            let inRange =
                reverse
                ? !entryKey.lexicographicallyPrecedes(range.lowerBound)
                : range.upperBound.map { entryKey.lexicographicallyPrecedes($0) } ?? true
            guard inRange else { break }
            let entryValue = value.bytes
            guard chunk.append(key: entryKey, value: entryValue) else { break }
            status = move(reverse ? MDB_PREV : MDB_NEXT)
        }
        if status != MDB_NOTFOUND { try check(status, "cannot read a range") }
        return chunk
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        for case .put(let key, _) in batch.operations {
            if key.count > maxKeySize {
                throw StorageError(
                    .keyTooLong(length: key.count, limit: maxKeySize),
                    "a key of \(key.count) bytes is longer than LMDB accepts (\(maxKeySize) bytes)",
                    backend: LMDBStore.backendName)
            }
            if key.isEmpty {
                throw StorageError(.engine, "LMDB does not accept an empty key", backend: LMDBStore.backendName, engineStatus: MDB_BAD_VALSIZE)
            }
        }
        while true {
            var transaction: OpaquePointer?
            try check(mdb_txn_begin(environment, nil, 0, &transaction), "cannot begin a write transaction")
            var status = apply(batch, in: transaction)
            if status == 0 {
                status = mdb_txn_commit(transaction)  // frees the transaction, even when it fails
            } else {
                mdb_txn_abort(transaction)
            }
            if status == MDB_MAP_FULL {
                try growMap()
                continue
            }
            try check(status, "cannot write a batch")
            break
        }
        if durable { try check(mdb_env_sync(environment, 1), "cannot flush a durable batch to disk") }
    }

    // MARK: Helpers

    /// Applies the operations in `transaction`; returns LMDB's status (0 on success).
    private func apply(_ batch: WriteBatch, in transaction: OpaquePointer?) -> Int32 {
        for operation in batch.operations {
            let status: Int32
            switch operation {
            case .put(let key, let value):
                status = key.withValue { key in value.withValue { mdb_put(transaction, database, &key, &$0, 0) } }
            case .delete(let key):
                guard !key.isEmpty, key.count <= maxKeySize else { continue }  // cannot be stored
                let deleted = key.withValue { mdb_del(transaction, database, &$0, nil) }
                status = deleted == MDB_NOTFOUND ? 0 : deleted
            case .deleteRange(let range):
                status = deleteRange(range, in: transaction)
            }
            if status != 0 { return status }
        }
        return 0
    }

    /// Deletes every key in `range`; returns LMDB's status (0 on success).
    private func deleteRange(_ range: KeyRange, in transaction: OpaquePointer?) -> Int32 {
        LMDBRangeDelete.run(range, database: database, in: transaction)
    }

    /// Doubles the memory map. No transaction is active: the caller holds the store's lock.
    private func growMap() throws {
        endReader()
        let (doubled, overflow) = mapSize.multipliedReportingOverflow(by: 2)
        let status = overflow ? ENOMEM : mdb_env_set_mapsize(environment, doubled)
        guard status == 0 else {
            throw StorageError(
                .diskFull,
                "the batch does not fit in the LMDB map of \(mapSize) bytes, which cannot grow: \(String(cString: mdb_strerror(status)))",
                backend: LMDBStore.backendName, engineStatus: status)
        }
        mapSize = doubled
    }

    /// Runs `body` in the kept read-only transaction, renewed for the call and reset after it.
    private func withReader<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
        if let reader {
            let status = mdb_txn_renew(reader)
            if status != 0 {
                endReader()
                throw failure(status, "cannot begin a read transaction")
            }
        } else {
            try check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &reader), "cannot begin a read transaction")
        }
        defer { mdb_txn_reset(reader) }
        return try body(reader)
    }

    /// Aborts the kept read-only transaction, if any.
    private func endReader() {
        if let reader { mdb_txn_abort(reader) }
        reader = nil
    }

    private func check(_ status: Int32, _ context: @autoclosure () -> String) throws {
        if status != 0 { throw failure(status, context()) }
    }

    /// Whether the data file is at the process's file size limit or the disk has (almost) no room.
    private func isOutOfRoom() -> Bool {
        let descriptor = open(directory + "/data.mdb", O_RDONLY)
        let end = descriptor >= 0 ? lseek(descriptor, 0, SEEK_END) : 0
        if descriptor >= 0 { Glibc.close(descriptor) }
        let size = UInt64(max(end, 0))
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max,
           size + (1 << 16) >= UInt64(limit.rlim_cur) {
            return true
        }
        var volume = statvfs()
        return statvfs(directory, &volume) == 0 && UInt64(volume.f_bavail) * UInt64(volume.f_frsize) < (1 << 20)
    }

    /// A ``StorageError`` for LMDB status `status` (an LMDB error or an `errno`).
    private func failure(_ status: Int32, _ context: String) -> StorageError {
        let detail = String(cString: mdb_strerror(status))
        let code: StorageError.Code
        var advice = ""
        switch status {
        case MDB_MAP_FULL, ENOSPC, EDQUOT, EFBIG:
            code = .diskFull
            advice = "; free some disk space and retry"
        case MDB_CORRUPTED, MDB_INVALID, MDB_VERSION_MISMATCH, MDB_PAGE_NOTFOUND:
            code = .corrupt
            advice = "; the LMDB files are damaged or of another version: remove the store directory to start afresh"
        case EIO where isOutOfRoom():
            // LMDB reports a short write as EIO: at a file size limit or on a full disk the
            // write stopped part way, which is the disk being full.
            code = .diskFull
            advice = "; the disk or the file size limit is full: free some space and retry"
        case EIO, EACCES, EPERM, EROFS, ENOENT, ENOTDIR:
            code = .io
        case EAGAIN, EBUSY:
            code = .inUse(pid: nil)
        default:
            code = .engine
        }
        return StorageError(code, "\(context): \(detail)\(advice)", backend: LMDBStore.backendName, engineStatus: status)
    }
}

extension MDB_val {
    /// The bytes the value points at, valid until the transaction ends or writes.
    package var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
    /// A copy of the bytes.
    fileprivate var bytes: [UInt8] { [UInt8](buffer) }
}

extension Array where Element == UInt8 {
    /// Calls `body` with an `MDB_val` pointing at the bytes (LMDB only reads them).
    package func withValue<R>(_ body: (inout MDB_val) throws -> R) rethrows -> R {
        try withUnsafeBytes { bytes in
            var value = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return try body(&value)
        }
    }
}

/// Deleting a key range with a cursor, shared by the store and rtdb-bench's raw LMDB engine.
package enum LMDBRangeDelete {
    /// Deletes every key of `database` in `range` inside `transaction`; returns LMDB's status
    /// (0 on success).
    package static func run(_ range: KeyRange, database: MDB_dbi, in transaction: OpaquePointer?) -> Int32 {
        var cursor: OpaquePointer?
        let opened = mdb_cursor_open(transaction, database, &cursor)
        guard opened == 0 else { return opened }
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var status =
            range.lowerBound.isEmpty
            ? mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            : range.lowerBound.withValue { bound in
                key = bound
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
        while status == 0 {
            if let upperBound = range.upperBound, !key.buffer.lexicographicallyPrecedes(upperBound) { break }
            status = mdb_cursor_del(cursor, 0)
            // After a delete the cursor stands on the next entry; MDB_NEXT returns it.
            if status == 0 { status = mdb_cursor_get(cursor, &key, &value, MDB_NEXT) }
        }
        return status == MDB_NOTFOUND ? 0 : status
    }
}
