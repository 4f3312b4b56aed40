import CLMDB
import Persistence
import PersistenceLMDB  // its range delete, MDB_val and byte-array helpers
import Synchronization

/// LMDB through its C API: the store's flags (`MDB_NOTLS | MDB_NOSYNC`, a sync after a durable
/// commit), one write transaction per batch, a cursor per range.
final class RawLMDB: RawEngine {
    // The environment handle is only used under `lock` (one transaction at a time).
    private let lock: Mutex<OpaquePointer?>
    /// The main database's handle: opened once in `init`, a plain number read by every transaction.
    private let database: MDB_dbi

    init(directory: String) throws {
        var environment: OpaquePointer?
        try RawLMDB.check(mdb_env_create(&environment), "mdb_env_create")
        var opened: MDB_dbi = 0
        do {
            try RawLMDB.check(mdb_env_set_mapsize(environment, 4 << 30), "mdb_env_set_mapsize")
            try RawLMDB.check(mdb_env_open(environment, directory, UInt32(MDB_NOTLS | MDB_NOSYNC), 0o644), "mdb_env_open")
            var transaction: OpaquePointer?
            try RawLMDB.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin")
            do {
                try RawLMDB.check(mdb_dbi_open(transaction, nil, 0, &opened), "mdb_dbi_open")
            } catch {
                mdb_txn_abort(transaction)
                throw error
            }
            try RawLMDB.check(mdb_txn_commit(transaction), "mdb_txn_commit")
        } catch {
            mdb_env_close(environment)
            throw error
        }
        database = opened
        lock = Mutex(environment)
    }

    private static func check(_ status: Int32, _ call: String) throws {
        guard status == 0 else { throw RawEngineError(description: "\(call): \(String(cString: mdb_strerror(status)))") }
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        try lock.withLock { environment in
            var transaction: OpaquePointer?
            try RawLMDB.check(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin")
            var status: Int32 = 0
            for operation in batch.operations where status == 0 {
                switch operation {
                case .put(let key, let value):
                    status = key.withValue { key in value.withValue { mdb_put(transaction, database, &key, &$0, 0) } }
                case .delete(let key):
                    status = key.withValue { mdb_del(transaction, database, &$0, nil) }
                    if status == MDB_NOTFOUND { status = 0 }
                case .deleteRange(let range):
                    status = LMDBRangeDelete.run(range, database: database, in: transaction)
                }
            }
            guard status == 0 else {
                mdb_txn_abort(transaction)
                throw RawEngineError(description: "LMDB write: \(String(cString: mdb_strerror(status)))")
            }
            try RawLMDB.check(mdb_txn_commit(transaction), "mdb_txn_commit")
            if durable { try RawLMDB.check(mdb_env_sync(environment, 1), "mdb_env_sync") }
        }
    }

    func scan(_ range: KeyRange) throws -> Int {
        try lock.withLock { environment in
            var transaction: OpaquePointer?
            try RawLMDB.check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction), "mdb_txn_begin")
            defer { mdb_txn_abort(transaction) }
            var cursor: OpaquePointer?
            try RawLMDB.check(mdb_cursor_open(transaction, database, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var value = MDB_val()
            var bytes = 0
            var copy: [UInt8] = []  // a reader that keeps a value copies it
            var status = range.lowerBound.withValue { bound in
                key = bound
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
            while status == 0 {
                if let upper = range.upperBound, !key.buffer.lexicographicallyPrecedes(upper) { break }
                copy.removeAll(keepingCapacity: true)
                copy.append(contentsOf: value.buffer)
                bytes += key.mv_size + copy.count
                status = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            return bytes
        }
    }

    func close() {
        lock.withLock { environment in
            guard let open = environment else { return }
            mdb_env_sync(open, 1)
            mdb_env_close(open)
            environment = nil
        }
    }
}
