import CoreTree
import Foundation
public import Persistence
import Synchronization

/// The user write queue: order, server values, restarts, concurrent writers.
struct QueueChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    /// The write with id `id`, the same every time (so a reader can check what a writer wrote).
    static func record(_ id: Int64) -> UserWriteRecord { ConformanceRecords.record(id) }
}

/// Queue records the suite and its crash-writer child process agree on.
public enum ConformanceRecords {
    /// The write with id `id`, the same every time (so a reader can check what a writer wrote).
    public static func record(_ id: Int64) -> UserWriteRecord {
        let path = TreePath(keys: ["queue", ChildKey("item\(id)")])
        if id % 3 == 0 {
            let children = [
                UserWriteRecord.UpdateChild(path: "count", node: Node(children: [".sv": Node(children: ["increment": Node(.number(1))])])),
                UserWriteRecord.UpdateChild(path: "gone", node: .empty),
                UserWriteRecord.UpdateChild(path: "deep/text", node: Node(.string("update \(id) " + String(repeating: "u", count: 60)))),
            ]
            return UserWriteRecord(writeId: id, path: path, kind: .merge(children))
        }
        let node = Node(children: [
            "id": Node(.number(Double(id))),
            "at": Node(children: [".sv": Node(.string("timestamp"))]),
            "text": Node(.string("set \(id) " + String(repeating: "s", count: 60)), priority: .string("p\(id)")),
        ])
        return UserWriteRecord(writeId: id, path: path, kind: .overwrite(node))
    }
}

extension QueueChecks {
    func orderAndRestart() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        var engine = try StorageEngine(store: try suite.openStore(directory))
        for id in Int64(1)...300 { try engine.appendUserWrite(QueueChecks.record(id)) }
        for id in Int64(1)...50 { try engine.removeUserWrite(writeId: id) }
        try engine.removeUserWrite(writeId: 200)
        try engine.close()
        engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let records = try engine.userWrites()
        let expected = (Int64(51)...300).filter { $0 != 200 }.map(QueueChecks.record)
        try require(records.map(\.writeId) == expected.map(\.writeId), "queue order after restart: \(records.prefix(5).map(\.writeId))…")
        for (record, want) in zip(records, expected) where record != want {
            throw ConformanceFailure("write \(record.writeId) came back as \(record), not \(want)")
        }
        // Ids above 2^32 and up to Int64.max keep their order.
        try engine.appendUserWrite(QueueChecks.record(1 << 40))
        try engine.appendUserWrite(QueueChecks.record(Int64.max))
        try require(try engine.userWrites().suffix(2).map(\.writeId) == [1 << 40, Int64.max], "large write ids are out of order")
        try engine.removeAllUserWrites()
        try require(try engine.userWrites().isEmpty, "removeAllUserWrites left writes behind")
    }

    func groupCommit() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        let writers = 8
        let perWriter = 100
        let failures = Mutex<[String]>([])
        let syncsBefore = engine.syncCount
        // Real threads: `concurrentPerform` would run only as many writers as there are cores.
        ConcurrentWriters.run(writers) { writer in
            for index in 0..<perWriter {
                let id = Int64(writer * perWriter + index + 1)
                do { try engine.appendUserWrite(QueueChecks.record(id)) } catch {
                    failures.withLock { $0.append("writer \(writer): \(error)") }
                }
            }
        }
        try require(failures.withLock { $0.isEmpty }, "concurrent appends failed: \(failures.withLock { $0.prefix(3) })")
        let ids = try engine.userWrites().map(\.writeId)
        try require(ids == Array(Int64(1)...Int64(writers * perWriter)), "\(ids.count) of \(writers * perWriter) concurrent writes are in the queue")
        let syncs = engine.syncCount - syncsBefore
        try require(syncs <= writers * perWriter, "\(syncs) syncs for \(writers * perWriter) writes")
        if suite.outlivesProcess {
            try require(syncs < writers * perWriter, "concurrent writers did not share a single sync (\(syncs) syncs)")
        }
    }
}

/// Runs `body` on `count` threads at once and waits for all of them.
public enum ConcurrentWriters {
    public static func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }
}
