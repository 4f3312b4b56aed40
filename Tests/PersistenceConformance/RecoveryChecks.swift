import Synchronization
import CoreTree
import Foundation
import Persistence

/// Damaged stores and unknown formats.
struct RecoveryChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    func corruptStore() throws {
        // A store whose records cannot be read: moved aside, the readable queue kept.
        var directory = suite.freshDirectory()
        do {
            defer { suite.remove(directory) }
            let engine = try StorageEngine(store: try suite.openStore(directory))
            for id in Int64(1)...3 { try engine.appendUserWrite(QueueChecks.record(id)) }
            try engine.overwriteServerCache(at: "a", with: Node(.string("cached")))
            var garbage = WriteBatch()
            garbage.put([UInt8(ascii: "q")] + [0, 0, 0, 0, 0, 0, 0, 9], Array("{not json".utf8))
            try engine.store.write(garbage, durable: true)
            try engine.close()
            let (recovered, report) = try StoreRecovery.open(suite.backend, directory: directory)
            defer { try? recovered.close() }
            guard let report else { throw ConformanceFailure("an unreadable tracked query was not detected") }
            try require(report.keptWrites == 3, "recovery kept \(report.keptWrites) of 3 readable writes")
            try require(try recovered.userWrites() == (Int64(1)...3).map(QueueChecks.record), "the kept writes differ")
            try require(try recovered.trackedQueries().isEmpty, "the fresh store kept damaged records")
            if suite.outlivesProcess {
                try require(FileManager.default.fileExists(atPath: report.movedTo), "the damaged store was not moved to \(report.movedTo)")
            }
        }
        guard suite.outlivesProcess else { return }
        // A store whose files are garbage: moved aside and started fresh.
        directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        do {
            let engine = try StorageEngine(store: try suite.openStore(directory))
            for id in Int64(1)...3 { try engine.appendUserWrite(QueueChecks.record(id)) }
            try engine.close()
        }
        var damaged = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != DirectoryLock.fileName {
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            try Data(repeating: 0xA5, count: max(size, 8192)).write(to: URL(fileURLWithPath: path))
            damaged += 1
        }
        try require(damaged > 0, "the backend left no files to damage in \(directory)")
        let (fresh, report) = try StoreRecovery.open(suite.backend, directory: directory)
        defer { try? fresh.close() }
        try require(report != nil, "a store of garbage files opened without recovery")
        try fresh.appendUserWrite(QueueChecks.record(7))
        try require(try fresh.userWrites().map(\.writeId) == [7], "the fresh store does not work")
    }

    func unknownFormat() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        do {
            let engine = try StorageEngine(store: try suite.openStore(directory))
            try engine.appendUserWrite(QueueChecks.record(1))
            var newer = WriteBatch()
            newer.put(Array("m/version".utf8), Array("99".utf8))
            try engine.store.write(newer, durable: true)
            try engine.close()
        }
        let store = try suite.openStore(directory)
        defer { try? store.close() }
        do {
            _ = try StorageEngine(store: store)
            throw ConformanceFailure("a store in format 99 was opened")
        } catch let error as StorageError {
            guard case .unsupportedFormat(found: 99, supported: StorageEngine.formatVersion) = error.code else {
                throw ConformanceFailure("format 99 failed with \(error), not unsupportedFormat")
            }
        }
        try require(try store.get(Array("m/version".utf8)) == Array("99".utf8), "refusing the store changed it")
        // An older format runs the migration hook.
        var older = WriteBatch()
        older.put(Array("m/version".utf8), Array("0".utf8))
        try store.write(older, durable: true)
        let migrated = Mutex<Int?>(nil)
        let engine = try StorageEngine(store: store) { from, _ in migrated.withLock { $0 = from } }
        try require(migrated.withLock { $0 } == 0, "the migration hook was not called with the old format")
        try require(try engine.userWrites().map(\.writeId) == [1], "migration lost the queue")
    }
}
