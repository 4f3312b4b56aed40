import CoreTree
import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import ServerCore
import Synchronization
import Testing
import TestSupport

/// The whole-store check on every disk backend: `NamespaceCheck` (what `rtdb-server check` runs)
/// reports a clean store sound and finds a flipped bit; the server's background check marks a
/// damaged namespace, whose operations then get the damage error, and counts it.
@Suite("Store check")
struct StoreCheckTests {
    static let backends: [StorageBackend] = [.sqlite, .lmdb, .leveldb]
    /// A value found once in the store's files, whose bits the tests flip.
    static let marker = "check-marker-7f3a9c1e5b2d40686e1f"

    /// Counts what the registry reports.
    final class RecordingMetrics: NamespaceMetrics {
        private let state = Mutex((checks: [StoreCheckResult](), damaged: 0))
        var checks: [StoreCheckResult] { state.withLock { $0.checks } }
        var damaged: Int { state.withLock { $0.damaged } }
        func denied(_ operation: String) {}
        func storeCommitted(in duration: Duration) {}
        func orphanSweepFinished() {}
        func cacheUsage(_ total: CacheBudget.Usage) {}
        func cacheLookups(hits: Int, misses: Int) {}
        func storeChecked(_ result: StoreCheckResult) { state.withLock { $0.checks.append(result) } }
        func namespaceDamaged() { state.withLock { $0.damaged += 1 } }
    }

    /// A data directory with namespace `dmg`: 40 rows, one holding ``marker``, written, closed
    /// and opened once more (LevelDB then moves its log into a table, where a flip is a table's
    /// damage, not a log record's).
    static func makeNamespace(_ backend: StorageBackend) async throws -> String {
        let dataDirectory = NSTemporaryDirectory() + "rtdb-check-\(backend.name)-\(UUID().uuidString)"
        // The caller removes it once it has it; until then, this does.
        var made = false
        defer { if !made { try? FileManager.default.removeItem(atPath: dataDirectory) } }
        let directory = dataDirectory + "/dmg"
        let store = try await EmbeddedServerStore.open(backend, directory: directory)
        var root = Node.empty
        var paths: [TreePath] = []
        for index in 0..<40 {
            let path = TreePath(unchecked: "rows/k\(index)")
            // 400 bytes a row: the rows span several of LevelDB's 4 KB blocks, and row k35 (the
            // marker, near the end in key order) is not in the first, which opening the
            // namespace reads (it seeks to `.info` for the store's version).
            let text = index == 35 ? marker : "value \(index) " + String(repeating: "\(index % 10)", count: 400)
            root = root.updatingChild(at: path, to: Node(.string(text)))
            paths.append(path)
        }
        try await store.commit(StoreChange(root: root, changedPaths: paths))
        try await store.close()
        try await EmbeddedServerStore.open(backend, directory: directory).close()
        made = true
        return dataDirectory
    }

    /// Flips one bit of every copy of ``marker`` in the namespace's files (a page may keep a
    /// stale copy in its free space; the live one is among them).
    static func flipMarker(in dataDirectory: String) throws {
        let directory = dataDirectory + "/dmg"
        let needle = Array(marker.utf8)
        var flipped = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.lowercased().contains("lock") {
            let path = directory + "/" + name
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            var index = 0
            var changed = false
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle {
                    bytes[index + needle.count / 2] ^= 0x04
                    changed = true
                    flipped += 1
                    index += needle.count
                } else {
                    index += 1
                }
            }
            if changed { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
        }
        guard flipped > 0 else { throw SupportFailure("the marker is in none of the files of \(directory)") }
    }

    static func registry(_ backend: StorageBackend, _ dataDirectory: String, metrics: RecordingMetrics, backgroundCheck: Bool = true) -> NamespaceRegistry {
        var settings = NamespaceRegistry.Settings(
            defaultNamespace: "dmg", dataDirectory: dataDirectory, maxOpenNamespaces: 4, rulesJSON: nil, writerRetention: .seconds(3600),
            clock: .system)
        settings.backgroundCheck = backgroundCheck
        let logger = Logger(label: "store-check-test")
        return NamespaceRegistry(configuration: settings, stores: .embedded(backend), logger: logger, warnings: LimitWarnings(logger: logger),
                                 metrics: metrics)
    }

    /// Whether `error` is the damage error: 503, caused by the storage error that names the damage.
    static func isDamageError(_ error: ServerError) -> Bool {
        error.code == .unavailable && (error.underlyingError as? StorageError)?.code == .corrupt
    }

    @Test("check: a clean store is sound, with every row counted", arguments: backends)
    func cleanStore(_ backend: StorageBackend) async throws {
        let dataDirectory = try await Self.makeNamespace(backend)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let report = try await offThePool { try NamespaceCheck.run(namespace: "dmg", dataDirectory: dataDirectory, backend: backend) }
        #expect(report.isSound, "\(report.damage)")
        #expect(report.rows > 40, "every row is read: the 40 leaves and the format key")
        #expect(report.bytes > 40 * 400)
        #expect(!report.fileCheck.isEmpty)
    }

    @Test("check: a flipped bit in a row is found and named", arguments: backends)
    func flippedBit(_ backend: StorageBackend) async throws {
        let dataDirectory = try await Self.makeNamespace(backend)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try Self.flipMarker(in: dataDirectory)
        let report = try await offThePool { try NamespaceCheck.run(namespace: "dmg", dataDirectory: dataDirectory, backend: backend) }
        #expect(!report.isSound)
        #expect(report.damage.allSatisfy { $0.code == .corrupt }, "\(report.damage)")
    }

    @Test("check: a namespace held by a running server is refused, saying so")
    func heldDirectory() async throws {
        let dataDirectory = try await Self.makeNamespace(.sqlite)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let lock = try DataDirectoryLock(path: dataDirectory)
        defer { withExtendedLifetime(lock) {} }
        do {
            _ = try await offThePool { try NamespaceCheck.run(namespace: "dmg", dataDirectory: dataDirectory, backend: .sqlite) }
            Issue.record("the check ran while the data directory was locked")
        } catch let error as ServerError {
            #expect(error.code == .unavailable)
            #expect(error.message.contains("another rtdb-server is using the data directory"), "\(error.message)")
        }
    }

    @Test("background check: a damaged namespace gets the damage error, is counted, and refuses writes", arguments: backends)
    func backgroundCheckFindsDamage(_ backend: StorageBackend) async throws {
        let dataDirectory = try await Self.makeNamespace(backend)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try Self.flipMarker(in: dataDirectory)
        let metrics = RecordingMetrics()
        let registry = Self.registry(backend, dataDirectory, metrics: metrics)
        let database = try await registry.lease(for: "dmg")
        #expect(await database.health.backgroundCheckResult() == .damaged)
        #expect(metrics.checks == [.damaged])
        #expect(metrics.damaged == 1)
        do {
            _ = try await database.read(TreePath(unchecked: "rows/k3"), as: .admin)
            Issue.record("a damaged namespace served a read")
        } catch {
            #expect(Self.isDamageError(error), "\(error)")
            #expect(error.message.contains("rtdb-server check"))
        }
        guard case .failed(let error) = await database.write(.set(path: TreePath(unchecked: "rows/k3"), node: Node(.string("new"))), as: .admin) else {
            Issue.record("a damaged namespace took a write")
            return
        }
        #expect(Self.isDamageError(error), "\(error)")
        #expect(metrics.damaged == 1, "a namespace is counted damaged once")
        await registry.release(database)
        await registry.closeAll()
    }

    @Test("background check: a sound namespace checks ok and serves", arguments: backends)
    func backgroundCheckOfSoundStore(_ backend: StorageBackend) async throws {
        let dataDirectory = try await Self.makeNamespace(backend)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let metrics = RecordingMetrics()
        let registry = Self.registry(backend, dataDirectory, metrics: metrics)
        let database = try await registry.lease(for: "dmg")
        #expect(await database.health.backgroundCheckResult() == .ok)
        #expect(metrics.checks == [.ok])
        #expect(metrics.damaged == 0)
        let value = try await database.read(TreePath(unchecked: "rows/k35"), as: .admin)
        #expect(value == Node(.string(Self.marker)))
        await registry.release(database)
        await registry.closeAll()
    }

    @Test("a read that meets a damaged row marks the namespace damaged, without a background check", arguments: backends)
    func readFindsDamage(_ backend: StorageBackend) async throws {
        let dataDirectory = try await Self.makeNamespace(backend)
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try Self.flipMarker(in: dataDirectory)
        let metrics = RecordingMetrics()
        let registry = Self.registry(backend, dataDirectory, metrics: metrics, backgroundCheck: false)
        let database = try await registry.lease(for: "dmg")
        #expect(await database.health.backgroundCheckResult() == nil)
        do {
            _ = try await database.read(TreePath(unchecked: "rows/k35"), as: .admin)
            Issue.record("a damaged row was served")
        } catch {
            #expect(Self.isDamageError(error), "\(error)")
        }
        #expect(metrics.damaged == 1)
        #expect(metrics.checks.isEmpty)
        do {
            _ = try await database.read(TreePath(unchecked: "rows/k3"), as: .admin)
            Issue.record("a namespace marked damaged served a read")
        } catch {
            #expect(Self.isDamageError(error), "\(error)")
        }
        await registry.release(database)
        await registry.closeAll()
    }
}
