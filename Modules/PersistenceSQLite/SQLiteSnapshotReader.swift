import CSQLite
import Persistence

/// The read-only connection of one snapshot scan (``SQLiteStore/scanSnapshot(_:_:)``): it opens
/// a read transaction when made and reads every chunk in it, so the whole scan sees the database
/// as it was then while the store's own connection goes on committing (WAL mode).
///
/// Not thread-safe: ``SQLiteConnection`` only touches it under the store's lock. `deinit` closes
/// it if still open.
final class SQLiteSnapshotReader {
    private var database: OpaquePointer?
    /// `SELECT k, v … WHERE k >= ?1 AND k < ?2` and `… WHERE k >= ?1`, prepared once.
    private var bounded: OpaquePointer?
    private var unbounded: OpaquePointer?

    /// Opens `path` read-only and begins the read transaction (a first read pins its snapshot).
    init(path: String) throws {
        var status = sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK else {
            close()
            throw SQLiteSnapshotReader.failure(status, "cannot open \(path) for a snapshot scan")
        }
        sqlite3_busy_timeout(database, 5000)
        status = sqlite3_exec(database, "BEGIN; SELECT 1 FROM kv LIMIT 1", nil, nil, nil)
        guard status == SQLITE_OK else {
            close()
            throw SQLiteSnapshotReader.failure(status, "cannot begin the snapshot scan's read transaction")
        }
        for (sql, slot) in [("SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k", \SQLiteSnapshotReader.bounded),
                            ("SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k", \SQLiteSnapshotReader.unbounded)] {
            var prepared: OpaquePointer?
            status = sqlite3_prepare_v2(database, sql, -1, &prepared, nil)
            self[keyPath: slot] = prepared
            guard status == SQLITE_OK else {
                close()
                throw SQLiteSnapshotReader.failure(status, "cannot prepare the snapshot scan")
            }
        }
    }

    deinit { close() }

    /// The next chunk of `range`, in ascending key order.
    func entries(in range: KeyRange) throws -> ScanChunk {
        guard let statement = range.upperBound == nil ? unbounded : bounded else {
            throw StorageError(.closed, "the snapshot scan's connection is closed", backend: "sqlite")
        }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, bound) in [range.lowerBound, range.upperBound].enumerated() {
            guard let bound else { continue }
            let status = bound.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, Int32(index + 1), 0) }
                return sqlite3_bind_blob64(statement, Int32(index + 1), base, sqlite3_uint64(bytes.count), SQLiteSnapshotReader.transient)
            }
            guard status == SQLITE_OK else { throw SQLiteSnapshotReader.failure(status, "cannot bind a parameter") }
        }
        var chunk = ScanChunk()
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw SQLiteSnapshotReader.failure(status, "cannot read a range of the snapshot") }
            let more = chunk.append(key: SQLiteConnection.column(0, of: statement), value: SQLiteConnection.column(1, of: statement))
            if !more { break }
        }
        return chunk
    }

    /// Ends the read transaction and closes the connection; harmless when already closed.
    func close() {
        sqlite3_finalize(bounded)
        sqlite3_finalize(unbounded)
        (bounded, unbounded) = (nil, nil)
        // Closing ends the read transaction (nothing was written: nothing to roll back).
        if let database { sqlite3_close_v2(database) }
        database = nil
    }

    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    private static func failure(_ status: Int32, _ context: String) -> StorageError {
        StorageError(SQLiteConnection.code(for: status), "\(context): \(String(cString: sqlite3_errstr(status)))", backend: "sqlite",
                     engineStatus: status)
    }
}
