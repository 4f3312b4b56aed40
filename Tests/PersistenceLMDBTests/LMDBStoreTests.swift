import Foundation
import Persistence
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
            #expect(try collect(store, KeyRange(from: long, to: nil)) == [[[8], [4]]])
            #expect(try collect(store, KeyRange(from: [7], to: long), reverse: true) == [[[UInt8](repeating: 7, count: 511), [3]]])
            var delete = WriteBatch()
            delete.deleteRange(KeyRange(from: [7], to: long))
            delete.deleteRange(KeyRange(from: long, to: [9]))
            try store.write(delete, durable: false)
            #expect(try collect(store, .all).isEmpty)
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

    @Test func secondOpenOfADirectoryIsInUse() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBStore(directory: directory)
            let error = try #require(throws: StorageError.self) { try LMDBStore(directory: directory) }
            #expect(error.code == .inUse(pid: ProcessInfo.processInfo.processIdentifier))
            try store.close()
            try LMDBStore(directory: directory).close()
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

    @Test func closedStoreThrowsClosed() throws {
        try withTemporaryDirectory { directory in
            let store = try LMDBStore(directory: directory)
            try store.close()
            try store.close()
            var batch = WriteBatch()
            batch.put([1], [])
            let error = try #require(throws: StorageError.self) { try store.write(batch, durable: true) }
            #expect(error.code == .closed)
        }
    }

    @Test func concurrentCallsAndReentrantScans() async throws {
        let directory = temporaryDirectoryPath()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBStore(directory: directory)
        try await exerciseConcurrentAndReentrantUse(store)
        try store.close()
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesMemoryStoreOnRandomOperations(seed: UInt64) throws {
        try withTemporaryDirectory { directory in
            try crossCheck(seed: seed, minimumKeyLength: 1) { try LMDBStore(directory: directory) }
        }
    }
}

// MARK: - Helpers (each backend's test target has its own copy)

/// The path of a fresh directory (not yet created) under the temporary directory.
private func temporaryDirectoryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("lmdb-store-\(UUID().uuidString)").path
}

/// Runs `body` with the path of a fresh directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    let directory = temporaryDirectoryPath()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try body(directory)
}

/// Four tasks write, read and scan at once; then a scan body reads and writes the store it scans
/// (the store's lock is not held while `body` runs, so this must not deadlock).
private func exerciseConcurrentAndReentrantUse(_ store: any OrderedKeyValueStore) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<4 {
            group.addTask {
                for round in 0..<50 {
                    let key: [UInt8] = [1, UInt8(worker), UInt8(round)]
                    var batch = WriteBatch()
                    batch.put(key, [UInt8(round)])
                    try store.write(batch, durable: round % 10 == 0)
                    #expect(try store.get(key) == [UInt8(round)])
                    var count = 0
                    try store.scan(KeyRange(prefix: [1, UInt8(worker)]), reverse: round % 2 == 0) { _, _ in
                        count += 1
                        return true
                    }
                    #expect(count == round + 1)
                }
            }
        }
        try await group.waitForAll()
    }
    var copied = 0
    try store.scan(KeyRange(prefix: [1]), reverse: false) { key, value in
        #expect(try store.get(key) == value)
        var batch = WriteBatch()
        batch.put([2] + key.dropFirst(), value)
        try store.write(batch, durable: false)
        copied += 1
        return true
    }
    #expect(copied == 200)
    #expect(try collect(store, KeyRange(prefix: [2])).count == 200)
}

/// The store's entries in `range` as `[key, value]` pairs, stopping after `limit`.
private func collect(_ store: any OrderedKeyValueStore, _ range: KeyRange, reverse: Bool = false, limit: Int = .max) throws -> [[[UInt8]]] {
    var entries: [[[UInt8]]] = []
    try store.scan(range, reverse: reverse) { key, value in
        entries.append([key, value])
        return entries.count < limit
    }
    return entries
}

/// Applies ~500 seeded random operations (puts, deletes, range deletes) to a store opened by `open`
/// and to a ``MemoryStore``, reopening the store halfway, and checks scans and reads agree.
private func crossCheck(seed: UInt64, minimumKeyLength: Int, open: () throws -> any OrderedKeyValueStore) throws {
    var random = SplitMix64(seed: seed)
    // Bytes that exercise unsigned order and prefixes; keys of up to 3 of them.
    let alphabet: [UInt8] = [0x00, 0x01, 0x41, 0x7F, 0x80, 0xC3, 0xFE, 0xFF]
    func key() -> [UInt8] {
        (0..<Int.random(in: minimumKeyLength...3, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? 0 }
    }
    func value() -> [UInt8] {
        (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }
    func range() -> KeyRange {
        let lower = key()
        if Int.random(in: 0..<5, using: &random) == 0 { return KeyRange(from: lower, to: nil) }
        if Int.random(in: 0..<5, using: &random) == 0 { return KeyRange(prefix: lower) }
        return KeyRange(from: lower, to: key())
    }
    func expectSameContents(_ store: any OrderedKeyValueStore, _ reference: MemoryStore) throws {
        #expect(try collect(store, .all) == collect(reference, .all))
        #expect(try collect(store, .all, reverse: true) == collect(reference, .all, reverse: true))
        for _ in 0..<10 {
            let range = range()
            let reverse = Bool.random(using: &random)
            let limit = Int.random(in: 1...200, using: &random)
            #expect(try collect(store, range, reverse: reverse) == collect(reference, range, reverse: reverse))
            #expect(try collect(store, range, reverse: reverse, limit: limit) == collect(reference, range, reverse: reverse, limit: limit))
            let probe = key()
            #expect(try store.get(probe) == reference.get(probe))
        }
    }

    var store = try open()
    let reference = MemoryStore()
    var initial = WriteBatch()
    for _ in 0..<400 { initial.put(key(), value()) }
    try store.write(initial, durable: false)
    try reference.write(initial, durable: false)
    for step in 0..<500 {
        var batch = WriteBatch()
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6: batch.put(key(), value())
            case 6..<8: batch.delete(key())
            default: batch.deleteRange(range())
            }
        }
        try store.write(batch, durable: Int.random(in: 0..<8, using: &random) == 0)
        try reference.write(batch, durable: false)
        if step == 250 {
            try store.close()
            store = try open()
        }
        try #require(try collect(store, .all) == collect(reference, .all), "the stores differ after batch \(step): \(batch.operations)")
        if step % 100 == 0 { try expectSameContents(store, reference) }
    }
    try expectSameContents(store, reference)
    try store.close()
}
