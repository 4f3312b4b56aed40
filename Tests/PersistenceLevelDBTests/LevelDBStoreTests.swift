import Foundation
import Persistence
import PersistenceConformance
import PersistenceLevelDB
import Testing

/// LevelDB-specific checks; the shared conformance suite covers the store contract.
@Suite struct LevelDBStoreTests {
    /// LevelDB cannot read the batch it is building, so range deletes are resolved by the store.
    @Test func batchAppliesPutsAndRangeDeletesInOrder() throws {
        try withTemporaryDirectory { directory in
            let store = try LevelDBStore(directory: directory)
            var setup = WriteBatch()
            setup.put([1, 0], [0])
            setup.put([1, 5], [5])
            setup.put([2, 0], [9])
            try store.write(setup, durable: false)

            var batch = WriteBatch()
            batch.put([1, 1], [1])  // put, then range-deleted: gone
            batch.put([1, 2], [2])  // put, range-deleted, put again: present
            batch.deleteRange(KeyRange(prefix: [1]))
            batch.put([1, 2], [22])
            batch.put([1, 3], [3])  // put, deleted: gone
            batch.delete([1, 3])
            batch.delete([1, 4])  // deleted, then put: present
            batch.put([1, 4], [4])
            try store.write(batch, durable: true)

            #expect(try StoreTestHelpers.collect(store, .all) == [[[1, 2], [22]], [[1, 4], [4]], [[2, 0], [9]]])
            try store.close()
            let reopened = try LevelDBStore(directory: directory)
            #expect(try StoreTestHelpers.collect(reopened, .all) == [[[1, 2], [22]], [[1, 4], [4]], [[2, 0], [9]]])
            try reopened.close()
        }
    }

    @Test func emptyKeysAndValuesAreStored() throws {
        try withTemporaryDirectory { directory in
            let store = try LevelDBStore(directory: directory)
            var batch = WriteBatch()
            batch.put([], [])
            batch.put([0], [])
            try store.write(batch, durable: false)
            #expect(try store.get([]) == [])
            #expect(try store.get([0]) == [])
            #expect(try store.get([1]) == nil)
            #expect(try StoreTestHelpers.collect(store, .all, reverse: true) == [[[0], []], [[], []]])
            try store.close()
        }
    }

    @Test func damagedFilesAreCorrupt() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: directory + "/CURRENT", contents: Data("garbage".utf8)))
            let error = try #require(throws: StorageError.self) { try LevelDBStore(directory: directory) }
            #expect(error.code == .corrupt)
            #expect(error.backend == "leveldb")
        }
    }
}

/// Runs `body` with the path of a fresh directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    try StoreTestHelpers.withTemporaryDirectory(prefix: "leveldb-store", body)
}
