import Foundation
import Persistence
import PersistenceConformance
import Synchronization
import Testing

/// A memory store whose durable writes take a while (as a disk's sync does) and can be made to fail.
private final class SlowSyncStore: OrderedKeyValueStore {
    let base = MemoryStore()
    let failing = Atomic<Bool>(false)
    let syncDelay: useconds_t

    init(syncDelayMicroseconds: useconds_t) { syncDelay = syncDelayMicroseconds }

    func get(_ key: [UInt8]) throws -> [UInt8]? { try base.get(key) }

    func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try base.scan(range, reverse: reverse, body)
    }

    func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try base.scanSnapshot(range, body)
    }

    func write(_ batch: WriteBatch, durable: Bool) throws {
        if durable {
            // A real thread from ConcurrentWriters, never a cooperative one.
            usleep(syncDelay)
            if failing.load(ordering: .relaxed) { throw StorageError(.engine, "the disk is full") }
        }
        try base.write(batch, durable: durable)
    }

    func close() throws { try base.close() }
}

@Suite("group commit")
struct GroupCommitTests {
    @Test("concurrent writers share syncs: far fewer syncs than writes, every write kept in order")
    func writersShareSyncs() throws {
        let engine = try StorageEngine(store: SlowSyncStore(syncDelayMicroseconds: 2_000))
        let writers = 8, perWriter = 25
        let before = engine.syncCount
        ConcurrentWriters.run(writers) { writer in
            for index in 0..<perWriter { try? engine.appendUserWrite(ConformanceRecords.record(Int64(writer * perWriter + index + 1))) }
        }
        let ids = try engine.userWrites().map(\.writeId).sorted()
        #expect(ids == Array(1...Int64(writers * perWriter)))
        let syncs = engine.syncCount - before
        // Ideal is one sync per 8 writes; half a sync per write would mean groups barely form.
        #expect(syncs * 2 < writers * perWriter, "\(syncs) syncs for \(writers * perWriter) writes")
    }

    @Test("a failed group sync fails every writer in it and applies none of their writes; later groups succeed")
    func failedGroupFailsEveryMember() throws {
        let store = SlowSyncStore(syncDelayMicroseconds: 1_000)
        let engine = try StorageEngine(store: store)
        store.failing.store(true, ordering: .relaxed)
        let failures = Atomic<Int>(0)
        ConcurrentWriters.run(8) { writer in
            do { try engine.appendUserWrite(ConformanceRecords.record(Int64(writer + 1))) } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 8)
        #expect(try engine.userWrites().isEmpty)

        store.failing.store(false, ordering: .relaxed)
        ConcurrentWriters.run(8) { writer in
            do { try engine.appendUserWrite(ConformanceRecords.record(Int64(100 + writer))) } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.load(ordering: .relaxed) == 8)
        #expect(try engine.userWrites().map(\.writeId).sorted() == Array(100...107))
        // A lone writer after the groups is not held back waiting for company that never comes.
        try engine.appendUserWrite(ConformanceRecords.record(200))
        #expect(try engine.userWrites().count == 9)
    }
}
