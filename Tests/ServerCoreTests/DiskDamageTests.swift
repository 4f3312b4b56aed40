import CoreTree
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import ServerCore
import Testing
import TestSupport

/// Random byte flips in a namespace's files, loaded by a child process (so a crash is an outcome
/// to count, not the end of the test run), then checked as the server's background check does:
/// a damaged store is refused when opened or read, or found damaged by the check; never a crash,
/// never a partial tree the check calls sound.
@Suite("Damage on disk")
struct DiskDamageTests {
    /// `detected`: the tree loaded (whole or not) and the whole-store check found the damage.
    enum Outcome: Hashable { case intact, refused, detected, partial, crashed }

    /// Loads the store in `directory` in a child process, without blocking a thread.
    private static func load(_ backend: String, _ directory: String) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try builtExecutable(named: "serverstore-crash-writer")
        process.arguments = ["load", backend, directory]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationReason == .uncaughtSignal ? -$0.terminationStatus : $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (status, output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A store of 300 children written in 60 commits, closed; its tree's hash.
    private static func makeStore(_ backend: StorageBackend, _ directory: String) async throws -> String {
        let store = try await EmbeddedServerStore.open(backend, directory: directory)
        var root = Node.empty
        var random = SplitMix64(seed: 7)
        for commit in 0..<60 {
            var paths: [TreePath] = []
            for index in commit * 5..<(commit * 5 + 5) {
                let path = TreePath(unchecked: "d/k\(index)")
                let text = String(repeating: "x", count: Int(random.next() % 300) + 1)
                root = root.updatingChild(at: path, to: try Node(jsonString: #"{"v":"\#(text)","n":\#(index)}"#))
                paths.append(path)
            }
            try await store.commit(StoreChange(root: root, changedPaths: paths))
        }
        try await store.close()
        return root.hash
    }

    /// Flips 1 to 8 random bits in one random file of `directory` (lock files aside).
    private static func damage(_ directory: String, _ random: inout SplitMix64) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.lowercased().contains("lock") }
            .map { directory + "/" + $0 }
            .filter { ((try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0) > 0 }
            .sorted()
        let file = files[Int(random.next() % UInt64(files.count))]
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        for _ in 0..<(random.next() % 8 + 1) {
            let offset = random.next() % size
            try handle.seek(toOffset: offset)
            let byte = try handle.read(upToCount: 1)![0]
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: [byte ^ UInt8(1 << (random.next() % 8))])
        }
    }

    /// Whether any flip reached data: some round was refused or found by the check.
    private static func reachedData(_ outcomes: [Outcome: Int]) -> Bool {
        let reached: Int = outcomes[.refused, default: 0] + outcomes[.detected, default: 0]
        return reached > 0
    }

    private static func run(_ backend: StorageBackend, rounds: Int) async throws -> [Outcome: Int] {
        let root = NSTemporaryDirectory() + "rtdb-damage-\(backend.name)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let pristine = root + "/pristine"
        // Store writes (fsync), copies and flips block: they run off the cooperative pool.
        // The store does its blocking writes on a thread of its own.
        let expected = try await makeStore(backend, pristine)
        var random = SplitMix64(seed: 2026)
        var outcomes: [Outcome: Int] = [:]
        for round in 0..<rounds {
            let copy = root + "/round-\(round)"
            random = try await offThePool { [random] in
                var random = random
                try FileManager.default.copyItem(atPath: pristine, toPath: copy)
                try damage(copy, &random)
                return random
            }
            let (status, output) = try await load(backend.name, copy)
            let outcome: Outcome =
                status != 0 ? .crashed
                : !output.hasPrefix("loaded") ? .refused
                : !output.hasSuffix("check ok") ? .detected
                : output == "loaded \(expected) check ok" ? .intact
                : .partial
            outcomes[outcome, default: 0] += 1
            try? FileManager.default.removeItem(atPath: copy)
        }
        print("disk damage \(backend.name): \(outcomes[.refused] ?? 0) refused, \(outcomes[.detected] ?? 0) found by the check, "
              + "\(outcomes[.intact] ?? 0) intact, \(outcomes[.partial] ?? 0) partial, \(outcomes[.crashed] ?? 0) crashed of \(rounds)")
        return outcomes
    }

    @Test("LevelDB: flipped bytes are refused, found by the check or harmless; never a crash or an unnoticed partial tree")
    func leveldb() async throws {
        let outcomes = try await Self.run(.leveldb, rounds: 60)
        #expect(outcomes[.crashed] == nil)
        #expect(outcomes[.partial] == nil)
        #expect(Self.reachedData(outcomes), "the flips did reach data")
    }

    @Test("SQLite: flipped bytes are refused, found by the check or harmless; never a crash or an unnoticed partial tree")
    func sqlite() async throws {
        let outcomes = try await Self.run(.sqlite, rounds: 60)
        #expect(outcomes[.crashed] == nil)
        #expect(outcomes[.partial] == nil)
        #expect(Self.reachedData(outcomes), "the flips did reach data")
    }

    @Test("LMDB: flipped bytes are refused, found by the check or harmless; never a crash or an unnoticed partial tree")
    func lmdb() async throws {
        let outcomes = try await Self.run(.lmdb, rounds: 60)
        #expect(outcomes[.crashed] == nil)
        #expect(outcomes[.partial] == nil)
        #expect(Self.reachedData(outcomes), "the flips did reach data")
    }

    @Test("LMDB: a truncated data file is refused instead of crashing the loader")
    func lmdbTruncated() async throws {
        let root = NSTemporaryDirectory() + "rtdb-truncate-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try await Self.makeStore(.lmdb, root)
        let file = root + "/data.mdb"
        let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as! Int
        for keep in [size / 2, 4096 * 2 + 100, 100, 0] {
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: file))
            try handle.truncate(atOffset: UInt64(keep))
            try handle.close()
            let (status, output) = try await Self.load("lmdb", root)
            #expect(status == 0, "truncated to \(keep) bytes: the loader died (\(status))")
            #expect(output.hasPrefix("refused corrupt"), "truncated to \(keep) bytes: \(output)")
        }
    }
}
