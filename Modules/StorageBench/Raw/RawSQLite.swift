import CSQLite
import Persistence
import PersistenceSQLite
import Synchronization

/// SQLite through its C API: the store's table, page size and WAL settings, one transaction per batch.
final class RawSQLite: RawEngine {
    private let connection: Mutex<Connection>

    init(directory: String) throws {
        connection = Mutex(try Connection(path: directory + "/raw.sqlite"))
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        try connection.withLock { try $0.write(batch, durable: durable) }
    }

    func scan(_ range: KeyRange) throws -> Int {
        try connection.withLock { try $0.scan(range) }
    }

    func close() { connection.withLock { $0.close() } }

    /// The connection and its statements; used only under the lock.
    final class Connection {
        private var database: OpaquePointer?
        private var statements: [String: OpaquePointer] = [:]
        private var synchronousFull = true

        init(path: String) throws {
            guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
                throw RawEngineError(description: "sqlite3_open_v2 \(path) failed")
            }
            try execute("PRAGMA page_size=\(SQLiteStore.pageSize)")
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=FULL")
            try execute(SQLiteStore.tableDefinition)
        }

        deinit { close() }

        func close() {
            for statement in statements.values { sqlite3_finalize(statement) }
            statements = [:]
            if let database { sqlite3_close_v2(database) }
            database = nil
        }

        func write(_ batch: WriteBatch, durable: Bool) throws {
            if synchronousFull != durable {
                try execute(durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
                synchronousFull = durable
            }
            try execute("BEGIN IMMEDIATE")
            for operation in batch.operations {
                switch operation {
                case .put(let key, let value): try run("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)", key, value)
                case .delete(let key): try run("DELETE FROM kv WHERE k = ?1", key)
                case .deleteRange(let range):
                    if let upper = range.upperBound {
                        try run("DELETE FROM kv WHERE k >= ?1 AND k < ?2", range.lowerBound, upper)
                    } else {
                        try run("DELETE FROM kv WHERE k >= ?1", range.lowerBound)
                    }
                }
            }
            try execute("COMMIT")
        }

        func scan(_ range: KeyRange) throws -> Int {
            var bytes = 0
            var copy: [UInt8] = []  // a reader that keeps a value copies it
            let sql = range.upperBound == nil ? "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k" : "SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k"
            try run(sql, range.lowerBound, range.upperBound) { statement in
                copy.removeAll(keepingCapacity: true)
                if let value = sqlite3_column_blob(statement, 1) {
                    copy.append(contentsOf: UnsafeRawBufferPointer(start: value, count: Int(sqlite3_column_bytes(statement, 1))))
                }
                bytes += Int(sqlite3_column_bytes(statement, 0)) + copy.count
            }
            return bytes
        }

        private func execute(_ sql: String) throws {
            guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
                throw RawEngineError(description: "\(sql): \(String(cString: sqlite3_errmsg(database)))")
            }
        }

        private func run(_ sql: String, _ parameters: [UInt8]?..., row: (OpaquePointer) -> Void = { _ in }) throws {
            let statement = try prepare(sql)
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            for (index, parameter) in parameters.enumerated() {
                guard let parameter else { continue }
                let status = parameter.withUnsafeBytes { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, Int32(index + 1), 0) }
                    return sqlite3_bind_blob64(statement, Int32(index + 1), base, sqlite3_uint64(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                }
                guard status == SQLITE_OK else { throw RawEngineError(description: "cannot bind: \(String(cString: sqlite3_errmsg(database)))") }
            }
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return }
                guard status == SQLITE_ROW else { throw RawEngineError(description: "\(sql): \(String(cString: sqlite3_errmsg(database)))") }
                row(statement)
            }
        }

        private func prepare(_ sql: String) throws -> OpaquePointer {
            if let statement = statements[sql] { return statement }
            var statement: OpaquePointer?
            guard sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
                throw RawEngineError(description: "cannot prepare \(sql): \(String(cString: sqlite3_errmsg(database)))")
            }
            statements[sql] = statement
            return statement
        }
    }
}
