import CoreTree
import Foundation
import Persistence
import PersistenceSQLite
import Synchronization
import SyncProtocol
import Testing
@testable import ServerCore

/// The server half of exactly-once queued writes: a stamped write is applied at most once per
/// namespace, its client's record is durable with it, and only writes that were applied count.
@Suite("exactly-once writes (server)")
struct ExactlyOnceTests {
    private static let counter = TreePath(unchecked: "counter")
    private static let increment = CoreTree.ServerValue.increment(1)

    private static func directory() -> String { NSTemporaryDirectory() + "rtdb-once-\(UUID().uuidString)" }

    private static func open(_ directory: String, clock: @escaping @Sendable () -> Int64 = NamespaceDatabase.systemClock,
                             retention: Duration = NamespaceDatabase.defaultWriterRetention) async throws -> (NamespaceDatabase, EmbeddedServerStore) {
        let store = try await EmbeddedServerStore.open(.sqlite, directory: directory)
        return (try await NamespaceDatabase.open(name: "once", store: store, clock: clock, writerRetention: retention), store)
    }

    private static func value(_ database: NamespaceDatabase) async throws -> Node {
        try await database.read(counter, as: .admin)
    }

    private static func committed(_ result: WriteResult) -> Bool {
        if case .committed = result { return true }
        return false
    }

    @Test("A repeated stamp is answered ok and changes nothing; other clients and sequences apply")
    func repeatIsAnsweredWithoutApplying() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (database, _) = try await Self.open(directory)
        let first = WriteStamp(client: "client-a", sequence: 1, floor: 1)
        #expect(Self.committed(await database.write(.set(path: Self.counter, node: Self.increment), stamp: first, as: .admin)))
        let repeated = await database.write(.set(path: Self.counter, node: Self.increment), stamp: first, as: .admin)
        guard case .committed(let value) = repeated else {
            Issue.record("a repeat must be answered as committed, got \(repeated)")
            return
        }
        #expect(value == Node(.number(1)), "the repeat's answer reports the data there now")
        #expect(try await Self.value(database) == Node(.number(1)))
        _ = await database.write(.set(path: Self.counter, node: Self.increment), stamp: WriteStamp(client: "client-b", sequence: 1, floor: 1), as: .admin)
        _ = await database.write(.update(path: .root, children: [(Self.counter, Self.increment)]),
                                 stamp: WriteStamp(client: "client-a", sequence: 2, floor: 1), as: .admin)
        _ = await database.write(.set(path: Self.counter, node: Self.increment), as: .admin)
        #expect(try await Self.value(database) == Node(.number(4)))
        try await database.close()
    }

    @Test("The record is stored with the write: a repeat after the server restarts still changes nothing")
    func recordSurvivesRestart() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stamp = WriteStamp(client: "restarting", sequence: 7, floor: 7)
        do {
            let (database, _) = try await Self.open(directory)
            _ = await database.write(.set(path: Self.counter, node: Self.increment), stamp: stamp, as: .admin)
            try await database.close()
        }
        let (database, store) = try await Self.open(directory)
        let stored = try await store.setting(named: "writers/restarting").map { String(decoding: $0, as: UTF8.self) }
        #expect(stored?.split(separator: " ").dropFirst() == ["7"], "the record lists the applied sequence: \(stored ?? "none")")
        _ = await database.write(.set(path: Self.counter, node: Self.increment), stamp: stamp, as: .admin)
        #expect(try await Self.value(database) == Node(.number(1)))
        try await database.close()
    }

    @Test("Writes that were not applied (stale, denied, failed to commit) do not count as applied")
    func onlyAppliedWritesCount() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (database, _) = try await Self.open(directory)
        _ = await database.write(.set(path: Self.counter, node: Node(.number(10))), as: .admin)
        let stamp = WriteStamp(client: "tx", sequence: 3, floor: 3)
        let stale = await database.write(.set(path: Self.counter, node: Node(.number(11))), condition: .hash("not-the-hash"), stamp: stamp, as: .admin)
        guard case .stale = stale else {
            Issue.record("expected stale, got \(stale)")
            return
        }
        // The retry of the same transaction (same stamp) with the right hash applies.
        let hash = try await Self.value(database).hash
        #expect(Self.committed(await database.write(.set(path: Self.counter, node: Node(.number(11))), condition: .hash(hash), stamp: stamp, as: .admin)))
        #expect(try await Self.value(database) == Node(.number(11)))

        try await database.installRules(#"{"rules": {".read": true, "counter": {".write": "newData.val() != 99"}}}"#)
        let user = Caller.user(auth: nil)
        let deniedStamp = WriteStamp(client: "tx", sequence: 4, floor: 3)
        let denied = await database.write(.set(path: Self.counter, node: Node(.number(99))), stamp: deniedStamp, as: user)
        guard case .failed(let error) = denied, error.code == .permissionDenied else {
            Issue.record("expected a denial, got \(denied)")
            return
        }
        #expect(Self.committed(await database.write(.set(path: Self.counter, node: Node(.number(12))), stamp: deniedStamp, as: user)))
        #expect(try await Self.value(database) == Node(.number(12)))
        try await database.close()
    }

    @Test("A write whose commit failed is applied when its client sends it again")
    func failedCommitTakesTheStampBack() async throws {
        let store = SlowStore()
        let database = try await NamespaceDatabase.open(name: "f", store: store)
        let stamp = WriteStamp(client: "unlucky", sequence: 1, floor: 1)
        store.failNextCommit()
        let failed = await database.write(.set(path: Self.counter, node: Self.increment), stamp: stamp, as: .admin)
        guard case .failed = failed else {
            Issue.record("expected the commit to fail, got \(failed)")
            return
        }
        #expect(Self.committed(await database.write(.set(path: Self.counter, node: Self.increment), stamp: stamp, as: .admin)))
        #expect(try await database.read(Self.counter, as: .admin) == Node(.number(1)))
    }

    @Test("The floor lets the server forget settled stamps; records expire after the retention")
    func floorAndRetention() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = Mutex<Int64>(1_000_000)
        let clock: @Sendable () -> Int64 = { now.withLock { $0 } }
        let day: Int64 = 86_400_000
        do {
            let (database, store) = try await Self.open(directory, clock: clock, retention: .seconds(86_400))
            for sequence in 1...3 {
                _ = await database.write(.set(path: Self.counter, node: Self.increment),
                                         stamp: WriteStamp(client: "c", sequence: Int64(sequence), floor: Int64(sequence)), as: .admin)
            }
            let stored = try await store.setting(named: "writers/c").map { String(decoding: $0, as: UTF8.self) }
            #expect(stored?.split(separator: " ").dropFirst() == ["3"], "stamps below the floor are forgotten: \(stored ?? "none")")
            try await database.close()
        }
        now.withLock { $0 += 2 * day }
        let (database, store) = try await Self.open(directory, clock: clock, retention: .seconds(86_400))
        _ = await database.write(.set(path: TreePath(unchecked: "other"), node: Node(.number(1))), as: .admin)
        #expect(try await store.setting(named: "writers/c") == nil, "an expired record is removed from the store")
        // Past the retention a repeat is applied again: the stated limit of the guarantee.
        _ = await database.write(.set(path: Self.counter, node: Self.increment), stamp: WriteStamp(client: "c", sequence: 3, floor: 3), as: .admin)
        #expect(try await Self.value(database) == Node(.number(4)))
        try await database.close()
    }

    @Test("The ledger keeps a client's applied stamps as ranges: a backlog is one range, whatever its length")
    func ledgerRanges() {
        var ledger = WriterLedger(retention: 1_000)
        var setting = StoreSetting(name: "", value: [])
        for sequence in 1...10_000 { setting = ledger.noteApplied(WriteStamp(client: "c", sequence: Int64(sequence), floor: 1), now: 5) }
        #expect(String(decoding: setting.value, as: UTF8.self) == "5 1-10000")
        // A transaction settled out of order, then the queue's floor moving past the run.
        setting = ledger.noteApplied(WriteStamp(client: "c", sequence: 10_005, floor: 1), now: 6)
        #expect(String(decoding: setting.value, as: UTF8.self) == "6 1-10000 10005")
        setting = ledger.noteApplied(WriteStamp(client: "c", sequence: 10_002, floor: 9_000), now: 7)
        #expect(String(decoding: setting.value, as: UTF8.self) == "7 9000-10000 10002 10005")
        setting = ledger.noteApplied(WriteStamp(client: "c", sequence: 10_001, floor: 9_000), now: 7)
        #expect(String(decoding: setting.value, as: UTF8.self) == "7 9000-10002 10005")
        func applied(_ sequence: Int64) -> Bool { ledger.isDuplicate(WriteStamp(client: "c", sequence: sequence, floor: 9_000)) }
        #expect(applied(9_500) && !applied(10_003))
        ledger.forget(WriteStamp(client: "c", sequence: 9_500, floor: 9_000))
        #expect(!applied(9_500) && applied(9_499) && applied(9_501))
        // The stored form reads back as it was written.
        let record = WriterLedger.decode(Array("7 9000-9499 9501-10002 10005".utf8))
        #expect(record == WriterLedger.Record(applied: [9_000...9_499, 9_501...10_002, 10_005...10_005], lastApplied: 7))
        #expect(WriterLedger.decode(Array("x".utf8)) == nil)
    }
}
