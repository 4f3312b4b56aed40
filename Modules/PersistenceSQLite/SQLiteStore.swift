public import Persistence
import CSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``OrderedKeyValueStore`` kept in one SQLite database file, `store.sqlite`, in its directory.
///
/// The database runs in WAL mode with 8 KB pages and one table, `kv(k BLOB PRIMARY KEY, v BLOB NOT
/// NULL) WITHOUT ROWID`; SQLite compares blobs byte by byte, so its key order is the protocol's. Each batch is one
/// `BEGIN IMMEDIATE … COMMIT` transaction, run with `PRAGMA synchronous=FULL` when durable (one
/// `fdatasync` of the WAL per commit) and `NORMAL` when not (no sync; survives the process being
/// killed).
///
/// One connection serves every call, serialised by a lock, so the store may be used from any thread.
/// ``scan(_:reverse:_:)`` reads the range in chunks and calls `body` without holding the lock, so
/// `body` may call back into the store.
public final class SQLiteStore: OrderedKeyValueStore {
    /// The backend's name in errors and in ``StorageBackends``.
    static let backendName = "sqlite"
    /// The database file's name inside the store directory.
    public static let fileName = "store.sqlite"
    /// The page size a new database gets: 8 KB, so a row of up to about 2 KB (a cache leaf with a
    /// 1 KB string) stays on its b-tree page. At SQLite's default 4 KB such rows spilled into
    /// overflow pages and a 9.2 MB cache took 32 MB on disk; at 8 KB it takes 11 MB (measured
    /// with rtdb-bench). A store created with another page size keeps it.
    package static let pageSize = 8192
    /// The one table's definition.
    package static let tableDefinition = "CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID"

    private let state: Mutex<SQLiteConnection?>
    /// The database file's path.
    private let path: String
    /// The connection of a file check in progress (its address; 0 when none), so ``close()`` can
    /// interrupt it. Kept as a number: the connection belongs to the checking thread, and
    /// `sqlite3_interrupt` is the one call SQLite allows from another.
    private let runningCheck = Mutex<UInt>(0)

    /// Opens the store in `directory`, creating the directory and the database if needed.
    ///
    /// - Parameter directory: The store's directory; it holds `store.sqlite`, its `-wal` and `-shm`
    ///   files, and the lock file.
    /// - Throws: ``StorageError/Code-swift.enum/inUse(pid:)`` when another process or handle has
    ///   the directory open, ``StorageError/Code-swift.enum/corrupt`` when the file is not a
    ///   database, or another ``StorageError`` when SQLite cannot open it.
    public convenience init(directory: String) throws {
        try self.init(directory: directory, bulkLoad: false)
    }

    /// Opens the store in `directory` as ``init(directory:)`` does; with `bulkLoad`, for a load
    /// into a store that is thrown away if the load does not finish: without a journal (rows go
    /// to the database file once, not to the WAL and then the file), so a crash can leave the
    /// file damaged. The next open in the usual way returns it to WAL mode.
    public init(directory: String, bulkLoad: Bool) throws {
        let lock = try DirectoryLock(directory: directory, backend: SQLiteStore.backendName)
        path = directory + "/" + SQLiteStore.fileName
        state = Mutex(try SQLiteConnection(path: directory + "/" + SQLiteStore.fileName, lock: lock, bulkLoad: bulkLoad))
    }

    private func withConnection<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try state.withLock { connection in
            guard let connection else {
                throw StorageError(.closed, "the store is closed; open it again to use it", backend: SQLiteStore.backendName)
            }
            return try body(connection)
        }
    }

    /// The value stored under `key`, or `nil`.
    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try withConnection { try $0.get(key) }
    }

    /// Calls `body` with each entry in `range`, in key order (descending when `reverse`), until it
    /// returns `false`.
    ///
    /// Entries are read in chunks under the store's lock and handed to `body` outside it, so `body`
    /// may call the store; a write made during the scan may be seen by the chunks still to come.
    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try ChunkedScan.run(range, reverse: reverse, readChunk: { remaining in
            try withConnection { try $0.entries(in: remaining, reverse: reverse) }
        }, body)
    }

    /// Calls `body` with each entry in `range`, in key order, as one read transaction sees them:
    /// writes made meanwhile are not seen.
    ///
    /// The scan reads through a read-only connection of its own, in one transaction (WAL mode
    /// lets the store's connection commit meanwhile). Each chunk is read under the store's lock
    /// and `body` runs outside it. Closing the store closes the scan's connection; the next
    /// chunk then throws ``StorageError/Code-swift.enum/closed``.
    public func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        let snapshot = try withConnection { try $0.beginSnapshot() }
        defer { state.withLock { handle in if let handle { handle.endSnapshot(snapshot) } } }
        try ChunkedScan.run(range, reverse: false, readChunk: { remaining in
            try withConnection { try $0.entries(in: remaining, snapshot: snapshot) }
        }, body)
    }

    /// Applies every operation of `batch`, in order, in one transaction: all or nothing.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/diskFull`` when the disk is full; nothing of the
    ///   batch is applied after any error.
    public func write(_ batch: WriteBatch, durable: Bool) throws {
        try withConnection { handle in
            // Even an empty batch checks that the store is open.
            guard !batch.isEmpty else { return }
            try handle.write(batch, durable: durable)
        }
    }

    /// Checkpoints the WAL into the database file and closes it (a file check in progress is
    /// interrupted). Closing twice is harmless.
    public func close() throws {
        runningCheck.withLock { check in
            if let connection = OpaquePointer(bitPattern: check) { sqlite3_interrupt(connection) }
        }
        try state.withLock { connection in
            defer { connection = nil }
            try connection?.close()
        }
    }
}

extension SQLiteStore: FileCheckingStore {
    /// Runs SQLite's `PRAGMA integrity_check` on a read-only connection of its own, so the store's
    /// reads and writes go on meanwhile (WAL mode: the check reads one snapshot).
    ///
    /// Not `quick_check`: it passes a flipped key that breaks the primary key's order, and a range
    /// scan seeking past that key then skips rows silently (1.25% of random bit flips in
    /// DiskDamageTests). `integrity_check` also checks the order and the `NOT NULL` constraint; on
    /// a 1-million-row table it costs about what `quick_check` does.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/corrupt`` with SQLite's first messages (which
    ///   name the b-tree page and cell), ``StorageError/Code-swift.enum/closed`` when the store
    ///   was closed during the check.
    public func checkFiles() throws -> String {
        var database: OpaquePointer?
        let status = sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        defer { sqlite3_close_v2(database) }
        guard status == SQLITE_OK, let database else {
            throw StorageError(.io, "cannot open \(path) to check it: \(String(cString: sqlite3_errstr(status)))",
                               backend: SQLiteStore.backendName, engineStatus: status)
        }
        sqlite3_busy_timeout(database, 5000)
        // Registered before the store is seen open: a close from now on interrupts the check.
        let address = UInt(bitPattern: database)
        runningCheck.withLock { $0 = address }
        defer { runningCheck.withLock { $0 = 0 } }
        try state.withLock { connection in
            guard connection != nil else {
                throw StorageError(.closed, "the store is closed; open it again to check it", backend: SQLiteStore.backendName)
            }
        }
        var messages: [String] = []
        var statement: OpaquePointer?
        var step = sqlite3_prepare_v2(database, "PRAGMA integrity_check(10)", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        if step == SQLITE_OK {
            while true {
                step = sqlite3_step(statement)
                guard step == SQLITE_ROW else { break }
                messages.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            }
        }
        switch step & 0xFF {
        case SQLITE_DONE where messages == ["ok"]:
            return "integrity_check: ok"
        case SQLITE_DONE, SQLITE_CORRUPT, SQLITE_NOTADB:
            let detail = messages.isEmpty ? String(cString: sqlite3_errmsg(database)) : messages.joined(separator: "; ")
            throw StorageError(
                .corrupt, "the SQLite database is damaged (integrity_check: \(detail)); restore it from a backup or move it aside",
                backend: SQLiteStore.backendName, engineStatus: step == SQLITE_DONE ? nil : step)
        case SQLITE_INTERRUPT:
            throw StorageError(.closed, "the store was closed during its check", backend: SQLiteStore.backendName, engineStatus: step)
        default:
            throw StorageError(.engine, "cannot check \(path): \(String(cString: sqlite3_errmsg(database)))",
                               backend: SQLiteStore.backendName, engineStatus: step)
        }
    }
}

extension SQLiteStore {
    /// Turns off SQLite's count of the memory it allocates, for a process that never asks for it
    /// (`sqlite3_memory_used`, a soft heap limit): each of SQLite's allocations then skips a lock
    /// all connections of the process share, about a tenth of an import's SQLite time.
    ///
    /// Call it before the process opens its first database: SQLite accepts it only then.
    ///
    /// - Returns: whether SQLite took it.
    @discardableResult
    package static func disableMemoryStatistics() -> Bool { rtdb_sqlite3_disable_memory_statistics() == SQLITE_OK }
}

extension StorageBackend {
    /// SQLite: one database file in WAL mode per store directory.
    public static let sqlite = StorageBackend(
        name: SQLiteStore.backendName, open: { try SQLiteStore(directory: $0) },
        openForBulkLoad: { try SQLiteStore(directory: $0, bulkLoad: true) })
}

// MARK: - The connection

/// Flushes a directory's entries (a rename into it) to disk; a failure only weakens durability.
private func syncDirectory(_ path: String) {
    let directory = open(path, O_RDONLY)
    guard directory >= 0 else { return }
    fsync(directory)
    close(directory)
}

/// `SQLITE_TRANSIENT`: SQLite copies a buffer bound with it (the C macro does not import).
private var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// The statements the store runs, prepared once and reused.
private enum Statement: String {
    case get = "SELECT v FROM kv WHERE k = ?1"
    case put = "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)"
    case delete = "DELETE FROM kv WHERE k = ?1"
    case deleteRange = "DELETE FROM kv WHERE k >= ?1 AND k < ?2"
    case deleteFrom = "DELETE FROM kv WHERE k >= ?1"
    case scanRange = "SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k"
    case scanFrom = "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k"
    case scanRangeReverse = "SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k DESC"
    case scanFromReverse = "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k DESC"
    case begin = "BEGIN IMMEDIATE"
    case commit = "COMMIT"
    case rollback = "ROLLBACK"
}

/// An open SQLite connection with its prepared statements; `deinit` closes it if still open.
///
/// Not thread-safe: ``SQLiteStore`` only touches it under its lock.
final class SQLiteConnection {
    private var database: OpaquePointer?
    private var statements: [Statement: OpaquePointer] = [:]
    /// Whether the connection runs with `synchronous=FULL` (else `NORMAL`).
    private var synchronousFull = true
    /// Held until the connection is closed.
    private var lock: DirectoryLock?
    /// The database file.
    private let path: String
    /// The connections of snapshot scans in progress, by number; closed with this one.
    private var snapshots: [Int: SQLiteSnapshotReader] = [:]
    private var lastSnapshot = 0

    init(path: String, lock: DirectoryLock, bulkLoad: Bool = false) throws {
        self.lock = lock
        self.path = path
        if SQLiteConnection.fileSize(path) == nil { try SQLiteConnection.create(path) }
        // A new database file is only ever renamed into place with its header and table written
        // (`create`), so an empty file with no log beside it held data once and lost it: it is
        // damage, not a new store, and opening it would serve an empty namespace.
        if SQLiteConnection.fileSize(path) == 0 && (SQLiteConnection.fileSize(path + "-wal") ?? 0) == 0 {
            throw StorageError(
                .corrupt, "the SQLite database file is empty (truncated?); restore it from a backup or move the store aside",
                backend: SQLiteStore.backendName)
        }
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &database, flags, nil)
        guard status == SQLITE_OK else { throw failure(status, "cannot open \(path)") }
        sqlite3_busy_timeout(database, 5000)
        let journalMode = try pragma("journal_mode=WAL")
        guard journalMode == "wal" else {
            throw StorageError(.engine, "SQLite cannot use WAL mode for \(path) (journal mode is \(journalMode ?? "unknown"))", backend: SQLiteStore.backendName)
        }
        _ = try pragma("secure_delete=OFF")
        _ = try pragma("synchronous=FULL")
        try execute(SQLiteConnection.createTable)
        // No structure check here: opening costs the same whatever the file's size. SQLite answers
        // a damaged page with SQLITE_CORRUPT rather than crashing; the whole-file check
        // (``SQLiteStore/checkFiles()``) runs on demand and in the server's background verification.
        if bulkLoad {
            // Measured on a 200 MB import: 51 MB/s instead of 45 (the WAL wrote every page twice).
            guard try pragma("journal_mode=OFF") == "off" else {
                throw StorageError(.engine, "SQLite cannot turn the journal off for a bulk load of \(path)", backend: SQLiteStore.backendName)
            }
        }
    }

    deinit { try? close() }

    /// Creates an empty store at `path` all at once: the database is set up under a staging name
    /// (WAL mode, the table) and renamed into place, so a process killed while creating a store
    /// leaves no file, or a complete one, never an empty file that would read as damage.
    private static func create(_ path: String) throws {
        let directoryPath = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."

        let staging = path + ".new"
        for leftover in [staging, staging + "-wal", staging + "-shm", staging + "-journal"] { unlink(leftover) }
        var database: OpaquePointer?
        var status = sqlite3_open_v2(staging, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        if status == SQLITE_OK {
            let setUp: String = "PRAGMA page_size=\(SQLiteStore.pageSize); PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; \(createTable)"
            status = sqlite3_exec(database, setUp, nil, nil, nil)
        }
        // Closing checkpoints the log into the file and syncs it.
        let closed = sqlite3_close_v2(database)
        guard status == SQLITE_OK, closed == SQLITE_OK else {
            let failed = status == SQLITE_OK ? closed : status
            unlink(staging)
            throw StorageError(code(for: failed), "cannot create the database \(path): \(String(cString: sqlite3_errstr(failed)))",
                               backend: SQLiteStore.backendName, engineStatus: failed)
        }
        guard rename(staging, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(staging)
            throw StorageError(.engine, "cannot move the new database into place at \(path): \(reason)", backend: SQLiteStore.backendName)
        }
        syncDirectory(directoryPath)
    }

    private static let createTable = SQLiteStore.tableDefinition

    /// The size of the file at `path`, or `nil` when there is none.
    private static func fileSize(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Finalizes the statements and closes the database (checkpointing the WAL), then unlocks the directory.
    func close() throws {
        defer { lock = nil }
        guard let database else { return }
        for reader in snapshots.values { reader.close() }
        snapshots = [:]
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        let status = sqlite3_close_v2(database)
        self.database = nil
        guard status == SQLITE_OK else {
            throw StorageError(SQLiteConnection.code(for: status), "cannot close the database: \(String(cString: sqlite3_errstr(status)))", backend: SQLiteStore.backendName, engineStatus: status)
        }
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        var value: [UInt8]?
        try run(.get, key) { statement in
            value = SQLiteConnection.column(0, of: statement)
            return false
        }
        return value
    }

    func entries(in range: KeyRange, reverse: Bool) throws -> ScanChunk {
        var chunk = ScanChunk()
        let statement: Statement =
            switch (range.upperBound == nil, reverse) {
            case (false, false): .scanRange
            case (true, false): .scanFrom
            case (false, true): .scanRangeReverse
            case (true, true): .scanFromReverse
            }
        try run(statement, range.lowerBound, range.upperBound) { statement in
            let key = SQLiteConnection.column(0, of: statement)
            let value = SQLiteConnection.column(1, of: statement)
            return chunk.append(key: key, value: value)
        }
        return chunk
    }

    /// Opens the read connection of a snapshot scan; returns its number.
    func beginSnapshot() throws -> Int {
        let reader = try SQLiteSnapshotReader(path: path)
        lastSnapshot += 1
        snapshots[lastSnapshot] = reader
        return lastSnapshot
    }

    /// The next chunk of a snapshot scan, read in its transaction.
    func entries(in range: KeyRange, snapshot: Int) throws -> ScanChunk {
        guard let reader = snapshots[snapshot] else {
            throw StorageError(.closed, "the snapshot scan ended: the store was closed", backend: SQLiteStore.backendName)
        }
        return try reader.entries(in: range)
    }

    /// Ends a snapshot scan (closes its connection), if the store has not already.
    func endSnapshot(_ snapshot: Int) {
        snapshots.removeValue(forKey: snapshot)?.close()
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        if synchronousFull != durable {
            // Only between transactions: SQLite ignores the setting inside one.
            _ = try pragma(durable ? "synchronous=FULL" : "synchronous=NORMAL")
            synchronousFull = durable
        }
        try run(.begin)
        do {
            let put = try prepare(.put)
            for operation in batch.operations {
                switch operation {
                case .put(let key, let value): try self.put(key, value, with: put)
                case .delete(let key): try run(.delete, key)
                case .deleteRange(let range):
                    if let upperBound = range.upperBound {
                        try run(.deleteRange, range.lowerBound, upperBound)
                    } else {
                        try run(.deleteFrom, range.lowerBound)
                    }
                }
            }
            try run(.commit)
        } catch {
            // SQLite may already have rolled back (e.g. on SQLITE_FULL); otherwise undo the batch here.
            if let database, sqlite3_get_autocommit(database) == 0 { try? run(.rollback) }
            throw error
        }
    }

    // MARK: Running statements

    /// Runs the prepared `INSERT OR REPLACE` for one row: the statement a batch runs most, so it
    /// binds its two blobs directly (no parameter array, no clearing: both are bound each time).
    private func put(_ key: [UInt8], _ value: [UInt8], with statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        func bind(_ blob: [UInt8], to index: Int32) throws {
            let status = blob.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_zeroblob(statement, index, 0)  // not NULL: keeps `v NOT NULL`
                }
                return sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(bytes.count), transient)
            }
            guard status == SQLITE_OK else { throw failure(status, "cannot bind a parameter") }
        }
        try bind(key, to: 1)
        try bind(value, to: 2)
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE else { throw failure(status, "cannot run \(Statement.put.rawValue)") }
    }

    /// Runs `statement` with `parameters` bound to `?1`, `?2`, … (a `nil` parameter is not bound),
    /// calling `row` for each result row until it returns `false`.
    private func run(_ statement: Statement, _ parameters: [UInt8]?..., row: (OpaquePointer) -> Bool = { _ in true }) throws {
        let prepared = try prepare(statement)
        defer {
            sqlite3_reset(prepared)
            sqlite3_clear_bindings(prepared)
        }
        for (index, parameter) in parameters.enumerated() {
            guard let parameter else { continue }
            let status = parameter.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_zeroblob(prepared, Int32(index + 1), 0)  // not NULL: keeps `v NOT NULL`
                }
                return sqlite3_bind_blob64(prepared, Int32(index + 1), base, sqlite3_uint64(bytes.count), transient)
            }
            guard status == SQLITE_OK else { throw failure(status, "cannot bind a parameter") }
        }
        while true {
            let status = sqlite3_step(prepared)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw failure(status, "cannot run \(statement.rawValue)") }
            if !row(prepared) { return }
        }
    }

    private func prepare(_ statement: Statement) throws -> OpaquePointer {
        if let prepared = statements[statement] { return prepared }
        guard let database else { throw StorageError(.closed, "the store is closed", backend: SQLiteStore.backendName) }
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v3(database, statement.rawValue, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard status == SQLITE_OK, let prepared else { throw failure(status, "cannot prepare \(statement.rawValue)") }
        statements[statement] = prepared
        return prepared
    }

    /// Runs `PRAGMA <text>` and returns the first column of its first row, if any.
    private func pragma(_ text: String) throws -> String? {
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v2(database, "PRAGMA " + text, -1, &prepared, nil)
        defer { sqlite3_finalize(prepared) }
        guard status == SQLITE_OK, let prepared else { throw failure(status, "cannot run PRAGMA \(text)") }
        let step = sqlite3_step(prepared)
        switch step {
        case SQLITE_ROW: return sqlite3_column_text(prepared, 0).map { String(cString: $0) }
        case SQLITE_DONE: return nil
        default: throw failure(step, "cannot run PRAGMA \(text)")
        }
    }

    private func execute(_ sql: String) throws {
        let status = sqlite3_exec(database, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(status, "cannot run \(sql)") }
    }

    /// A copy of the blob in column `index` of the current row.
    static func column(_ index: Int32, of statement: OpaquePointer) -> [UInt8] {
        // `sqlite3_column_blob` first, then `_bytes`, as SQLite documents; a zero-length blob is NULL.
        guard let base = sqlite3_column_blob(statement, index) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(statement, index))))
    }

    // MARK: Errors

    /// A ``StorageError`` for SQLite result `status`, with SQLite's message for the connection.
    private func failure(_ status: Int32, _ context: String) -> StorageError {
        let detail = database.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        var kind = SQLiteConnection.code(for: status)
        // SQLite reports only ENOSPC as SQLITE_FULL; a write cut short by a file size limit or a
        // quota is SQLITE_IOERR_WRITE (IOERR | 3 << 8, a macro Swift does not import), and SQLite does not keep that errno. A failed write is
        // treated as the disk being full (a failing device gives the same code).
        let extended = database.map { sqlite3_extended_errcode($0) } ?? status
        let systemErrno = database.map { sqlite3_system_errno($0) } ?? 0
        if extended == SQLITE_IOERR | (3 << 8) || (status & 0xFF == SQLITE_IOERR && [ENOSPC, EFBIG, EDQUOT].contains(systemErrno)) {
            kind = .diskFull
        }
        let advice =
            switch kind {
            case .diskFull: "; free some disk space and retry"
            case .corrupt: "; the file \(SQLiteStore.fileName) is damaged or not an SQLite database: remove the store directory to start afresh"
            case .inUse: "; another connection holds the database"
            default: ""
            }
        return StorageError(kind, "\(context): \(detail) (extended code \(extended))\(advice)", backend: SQLiteStore.backendName, engineStatus: status)
    }

    static func code(for status: Int32) -> StorageError.Code {
        switch status & 0xFF {
        case SQLITE_FULL: .diskFull
        case SQLITE_CORRUPT, SQLITE_NOTADB: .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: .inUse(pid: nil)
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY: .io
        default: .engine
        }
    }
}
