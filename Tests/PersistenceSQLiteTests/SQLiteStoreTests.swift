import Foundation
import Persistence
import PersistenceSQLite
import Testing
import TestSupport

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
            #expect(try collect(store, .all) == [[[], []], [[0], []]])
            try store.close()
        }
    }
}

// MARK: - Helpers

/// The path of a fresh directory (not yet created) under the temporary directory.
private func temporaryDirectoryPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-store-\(UUID().uuidString)").path
}

/// Runs `body` with the path of a fresh directory that is removed afterwards.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    let directory = temporaryDirectoryPath()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try body(directory)
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
