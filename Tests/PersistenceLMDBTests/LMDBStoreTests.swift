import Foundation
import Persistence
import PersistenceConformance
import PersistenceLMDB
import Testing
import TestSupport

/// LMDB-specific checks; the shared conformance suite covers the store contract.
@Suite struct LMDBStoreTests {
    @Test func batchLargerThanTheMapGrowsTheMap() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBStore(directory: directory)
            let value = [UInt8](repeating: 0xAB, count: 1 << 20)
            var batch = WriteBatch()
            for index in 0..<100 { batch.put([1, UInt8(index)], value) }  // 100 MiB in one batch
            try store.write(batch, durable: false)
            var more = WriteBatch()
            for index in 0..<40 { more.put([2, UInt8(index)], value) }
            try store.write(more, durable: true)
            try store.close()

            let reopened = try LMDBStore(directory: directory)
            #expect(try reopened.get([1, 99]) == value)
            #expect(try reopened.get([2, 39]) == value)
            var count = 0
            try reopened.scan(.all, reverse: false) { _, _ in
                count += 1
                return true
            }
            #expect(count == 140)
            try reopened.close()
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int ?? 0
            #expect(size > LMDBStore.initialMapSize)
        }
    }

    /// A process killed while LMDB was creating its data file (empty, meta pages not yet
    /// written) left nothing but the staging directory: the next open starts empty, while an
    /// empty `data.mdb` in place still means damage.
    @Test func killWhileCreatingLeavesAStoreThatOpensEmpty() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/creating.tmp", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: directory + "/creating.tmp/data.mdb", contents: Data())
            let store = try LMDBStore(directory: directory)
            #expect(try store.get([1]) == nil)
            try store.close()
            #expect(!FileManager.default.fileExists(atPath: directory + "/creating.tmp"))
            let size = try FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int ?? 0
            #expect(size > 0, "the data file appears with its meta pages")
        }
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: directory + "/data.mdb", contents: Data())
            #expect(throws: StorageError.self) { try LMDBStore(directory: directory) }
        }
    }

    @Test func keyLongerThanLMDBAcceptsThrowsKeyTooLong() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBStore(directory: directory)
            var batch = WriteBatch()
            batch.put([1], [1])
            batch.put([UInt8](repeating: 7, count: 600), [2])
            let error = try #require(throws: StorageError.self) { try store.write(batch, durable: false) }
            #expect(error.code == .keyTooLong(length: 600, limit: 511))
            #expect(error.backend == "lmdb")
            #expect(try store.get([1]) == nil)  // nothing of the batch was applied

            var longest = WriteBatch()
            longest.put([UInt8](repeating: 7, count: 511), [3])
            try store.write(longest, durable: false)
            #expect(try store.get([UInt8](repeating: 7, count: 511)) == [3])
            #expect(try store.get([UInt8](repeating: 7, count: 600)) == nil)

            // Bounds longer than LMDB's key limit still work in scans and range deletes.
            let long = [UInt8](repeating: 7, count: 600)
            var after = WriteBatch()
            after.put([8], [4])
            try store.write(after, durable: false)
            #expect(try StoreTestHelpers.collect(store, KeyRange(from: long, to: nil)) == [[[8], [4]]])
            #expect(try StoreTestHelpers.collect(store, KeyRange(from: [7], to: long), reverse: true) == [[[UInt8](repeating: 7, count: 511), [3]]])
            var delete = WriteBatch()
            delete.deleteRange(KeyRange(from: [7], to: long))
            delete.deleteRange(KeyRange(from: long, to: [9]))
            try store.write(delete, durable: false)
            #expect(try StoreTestHelpers.collect(store, .all).isEmpty)
            try store.close()
        }
    }

    @Test func emptyKeyCannotBeStored() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBStore(directory: directory)
            var batch = WriteBatch()
            batch.put([], [1])
            let error = try #require(throws: StorageError.self) { try store.write(batch, durable: false) }
            #expect(error.code == .engine)
            #expect(try store.get([]) == nil)
            var delete = WriteBatch()
            delete.delete([])
            delete.deleteRange(KeyRange(from: [], to: []))
            try store.write(delete, durable: false)
            try store.close()
        }
    }

    @Test func fileThatIsNotAnEnvironmentIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let garbage = Data(repeating: 0x5A, count: 16384)
            #expect(FileManager.default.createFile(atPath: directory + "/data.mdb", contents: garbage))
            let error = try #require(throws: StorageError.self) { try LMDBStore(directory: directory) }
            #expect(error.code == .corrupt)
            #expect(error.backend == "lmdb")
        }
    }
}

/// The tree check that runs before LMDB maps a file must pass every sound file: a refusal here
/// would lock a user out of healthy data.
@Suite struct LMDBTreeCheckTests {
    @Test("A store churned by puts, overwrites, deletes, range deletes and values on overflow pages reopens")
    func churnedStoreReopens() async throws {
        try await offThePool { try Self.churn() }
    }

    /// Twelve rounds of churn (blocking: it runs off the cooperative pool).
    private static func churn() throws {
        try withTemporaryDirectory { directory in
            var random = SplitMix64(seed: 11)
            var expected: [[UInt8]: [UInt8]] = [:]
            for round in 0..<12 {
                let store = try LMDBStore(directory: directory)
                for _ in 0..<8 {
                    var batch = WriteBatch()
                    for _ in 0..<200 {
                        let key = Array("k\(random.next() % 3000)".utf8) + [UInt8](repeating: 0x61, count: Int(random.next() % 40))
                        switch random.next() % 10 {
                        case 0..<6:
                            // Mostly small values; one in twenty spans several pages.
                            let size = random.next() % 20 == 0 ? Int(random.next() % 20_000) + 4_000 : Int(random.next() % 200)
                            let value = [UInt8](repeating: UInt8(truncatingIfNeeded: random.next()), count: size)
                            batch.put(key, value)
                            expected[key] = value
                        case 6..<9:
                            batch.delete(key)
                            expected[key] = nil
                        default:
                            let end = key + [0xFF]
                            batch.deleteRange(KeyRange(from: key, to: end))
                            for stored in expected.keys where !stored.lexicographicallyPrecedes(key) && stored.lexicographicallyPrecedes(end) {
                                expected[stored] = nil
                            }
                        }
                    }
                    try store.write(batch, durable: round % 2 == 0)
                }
                try store.close()
                let reopened = try LMDBStore(directory: directory)  // runs the check
                var found: [[UInt8]: [UInt8]] = [:]
                try reopened.scan(.all, reverse: false) { key, value in
                    found[key] = value
                    return true
                }
                #expect(found == expected, "round \(round)")
                try reopened.close()
            }
        }
    }
}

/// Runs `body` with the path of a fresh directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    try StoreTestHelpers.withTemporaryDirectory(prefix: "lmdb-store", body)
}
