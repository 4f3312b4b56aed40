import Foundation
import Persistence
import PersistenceConformance
import PersistenceSQLite
import Testing

/// SQLite-specific checks; the shared conformance suite covers the store contract.
@Suite struct SQLiteStoreTests {
    @Test func usesWriteAheadLogging() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory)
            var batch = WriteBatch()
            batch.put([1], [2])
            try store.write(batch, durable: true)
            #expect(FileManager.default.fileExists(atPath: directory + "/store.sqlite-wal"))
            try store.close()
            // Header bytes 18 and 19 (file format write and read versions) are 2 in WAL mode.
            let header = try #require(FileManager.default.contents(atPath: directory + "/" + SQLiteStore.fileName))
            #expect(header.count >= 100 && header[18] == 2 && header[19] == 2)
        }
    }

    /// Cache rows of about 1 KB (a leaf holding a 1 KB string) stay on their b-tree pages: with
    /// 8 KB pages the file holds them in well under twice their bytes (at SQLite's default 4 KB
    /// pages each spilled onto an overflow page and the file took over 3 times their bytes).
    @Test func kilobyteRowsTakeLessThanTwiceTheirSizeOnDisk() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory)
            var logical = 0
            for group in 0..<20 {
                var batch = WriteBatch()
                for index in 0..<100 {
                    let key = Array("c/data/q\(group)/attachments/a\(index)/".utf8)
                    let value = (0..<1_030).map { UInt8(97 + ($0 * 7 + index + group) % 26) }
                    batch.put(key, value)
                    logical += key.count + value.count
                }
                try store.write(batch, durable: false)
            }
            try store.close()
            let header = try #require(FileManager.default.contents(atPath: directory + "/" + SQLiteStore.fileName))
            // Header bytes 16 and 17: the page size, big-endian.
            #expect(Int(header[16]) << 8 | Int(header[17]) == 8_192)
            #expect(header.count < 2 * logical, "\(header.count) bytes on disk for \(logical) logical bytes")
        }
    }

    @Test func fileThatIsNotADatabaseIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let garbage = Data(repeating: 0x5A, count: 8192)
            #expect(FileManager.default.createFile(atPath: directory + "/" + SQLiteStore.fileName, contents: garbage))
            let error = try #require(throws: StorageError.self) { try SQLiteStore(directory: directory) }
            #expect(error.code == .corrupt)
            #expect(error.backend == "sqlite")
            #expect(error.engineStatus == 26)  // SQLITE_NOTADB
        }
    }

    @Test("A database file truncated to nothing is refused as damaged, not opened empty")
    func emptiedFileIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory)
            var batch = WriteBatch()
            batch.put([1], [2])
            try store.write(batch, durable: true)
            try store.close()
            #expect(truncate(directory + "/" + SQLiteStore.fileName, 0) == 0)
            let error = try #require(throws: StorageError.self) { try SQLiteStore(directory: directory) }
            #expect(error.code == .corrupt)
            // A new store in a fresh directory still opens.
            try withTemporaryDirectory { fresh in
                try SQLiteStore(directory: fresh).close()
                try SQLiteStore(directory: fresh).close()
            }
        }
    }

    /// A process killed while creating a store leaves at most a staging file, never an empty
    /// store file that would be refused as damaged.
    @Test func aNewStoreAppearsWholeAndALeftoverStagingFileIsIgnored() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/" + SQLiteStore.fileName
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path + ".new", contents: Data("half-made".utf8)))
            let store = try SQLiteStore(directory: directory)
            #expect(!FileManager.default.fileExists(atPath: path + ".new"))
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size > 0, "the store file holds its header and table from the start")
            var batch = WriteBatch()
            batch.put([1], [2])
            try store.write(batch, durable: true)
            try store.close()
            let reopened = try SQLiteStore(directory: directory)
            #expect(try reopened.get([1]) == [2])
            try reopened.close()
        }
    }

    @Test func emptyKeysAndValuesAreStoredAsEmptyBlobs() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory)
            var batch = WriteBatch()
            batch.put([], [])
            batch.put([0], [])
            try store.write(batch, durable: false)
            #expect(try store.get([]) == [])
            #expect(try store.get([0]) == [])
            #expect(try store.get([1]) == nil)
            #expect(try StoreTestHelpers.collect(store, .all) == [[[], []], [[0], []]])
            try store.close()
        }
    }
}

/// Runs `body` with the path of a fresh directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    try StoreTestHelpers.withTemporaryDirectory(prefix: "sqlite-store", body)
}
