import CLevelDB
import Persistence
import PersistenceLevelDB  // its options and byte-array helper

/// LevelDB through its C API: the store's own ``LevelDBOptions`` (bloom filter, 8 MB block cache,
/// checksums verified, synced writes when durable), one write batch per batch, an iterator per range.
final class RawLevelDB: RawEngine, @unchecked Sendable {
    // @unchecked: it wraps C handles. LevelDB's handle is thread-safe; the option objects are only read after `init`.
    private var database: OpaquePointer?
    /// Released after `deinit` has closed the database.
    private let settings = LevelDBOptions()

    init(directory: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        database = leveldb_open(settings.options, directory, &error)
        if let error {
            defer { leveldb_free(error) }
            throw RawEngineError(description: "leveldb_open: \(String(cString: error))")
        }
    }

    deinit {
        close()
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        let writeBatch = leveldb_writebatch_create()
        defer { leveldb_writebatch_destroy(writeBatch) }
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                key.withChars { key, keyLength in value.withChars { leveldb_writebatch_put(writeBatch, key, keyLength, $0, $1) } }
            case .delete(let key):
                key.withChars { leveldb_writebatch_delete(writeBatch, $0, $1) }
            case .deleteRange(let range):
                // LevelDB has no range delete: find the keys, delete each.
                forEach(in: range) { key, _ in
                    leveldb_writebatch_delete(writeBatch, key.baseAddress?.assumingMemoryBound(to: CChar.self), key.count)
                }
            }
        }
        var error: UnsafeMutablePointer<CChar>?
        leveldb_write(database, durable ? settings.syncWriteOptions : settings.writeOptions, writeBatch, &error)
        if let error {
            defer { leveldb_free(error) }
            throw RawEngineError(description: "leveldb_write: \(String(cString: error))")
        }
    }

    func scan(_ range: KeyRange) throws -> Int {
        var bytes = 0
        var copy: [UInt8] = []  // a reader that keeps a value copies it
        forEach(in: range) { key, value in
            copy.removeAll(keepingCapacity: true)
            copy.append(contentsOf: value)
            bytes += key.count + copy.count
        }
        return bytes
    }

    /// Calls `body` with each entry in `range`; the buffers are valid only during the call.
    private func forEach(in range: KeyRange, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        let iterator = leveldb_create_iterator(database, settings.readOptions)
        defer { leveldb_iter_destroy(iterator) }
        range.lowerBound.withChars { leveldb_iter_seek(iterator, $0, $1) }
        while leveldb_iter_valid(iterator) != 0 {
            var length = 0
            let key = UnsafeRawBufferPointer(start: leveldb_iter_key(iterator, &length), count: length)
            if let upper = range.upperBound, !key.lexicographicallyPrecedes(upper) { break }
            var valueLength = 0
            let value = UnsafeRawBufferPointer(start: leveldb_iter_value(iterator, &valueLength), count: valueLength)
            body(key, value)
            leveldb_iter_next(iterator)
        }
    }

    func close() {
        guard let database else { return }
        leveldb_close(database)
        self.database = nil
    }
}
