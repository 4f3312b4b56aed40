import Foundation
public import Persistence
import Synchronization

/// The persistence conformance suite: every backend's test target runs each ``Requirement``
/// against its backend, and the line `conformance <backend>: N passed, M failed` at the end.
public struct Conformance: Sendable {
    /// One named requirement of the suite.
    public enum Requirement: String, CaseIterable, Sendable, CustomStringConvertible {
        case storeOrdering = "store: keys scan in unsigned byte order, forwards and backwards"
        case storeRanges = "store: bounded range scans and prefix ranges"
        case storeBatches = "store: a batch applies its puts, deletes and range deletes in order, all together"
        case storeReopen = "store: data survives close and reopen"
        case storeMatchesModel = "store: random operations, reopened halfway, match the in-memory model"
        case storeConcurrentAndReentrant = "store: concurrent callers, and scan bodies that read and write the store"
        case storeClosed = "store: every call on a closed store throws 'closed'"
        case storeSnapshotScan = "store: a snapshot scan sees one moment while writes go on, and ends when the store closes"
        case storeInUse = "store: a second open of the same directory fails with 'in use'"
        case cacheRoundTrip = "cache: random trees written, merged and read back match a reference"
        case cacheLongPaths = "cache: a 32-level, 768-byte path works"
        case cacheSizeAccounting = "cache: the running size equals a recount and stays after reopen"
        case evictionLeastRecentFirst = "eviction: least recently used queries are pruned first, until under budget"
        case evictionKeepsActivePinnedAndPending = "eviction: active and pinned queries and pending writes are kept"
        case pinningSurvivesRestart = "pinning: a pinned query survives prune pressure and a restart"
        case queueOrderAndRestart = "queue: writes come back in order, with server values unresolved, after a restart"
        case queueGroupCommit = "queue: 8 concurrent writers share syncs and lose nothing"
        case queueDurabilityUnderSIGKILL = "queue: a writer killed with SIGKILL loses no acknowledged write (20 rounds)"
        case queueDiskFull = "queue: a full disk fails the write that did not fit and keeps the queue"
        case corruptStoreRecovery = "recovery: a corrupt store is moved aside, a readable queue kept"
        case unknownFormatRefused = "format: a store from a newer format is refused"

        public var description: String { rawValue }
    }

    /// Why a requirement does not apply to a backend (then it passes without running).
    public struct NotApplicable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// The backend under test.
    public let backend: StorageBackend
    /// Whether the store outlives its process (false for the in-memory store).
    public let outlivesProcess: Bool

    /// A suite for `backend`.
    public init(_ backend: StorageBackend, outlivesProcess: Bool = true) {
        self.backend = backend
        self.outlivesProcess = outlivesProcess
    }

    /// Runs one requirement; throws ``ConformanceFailure`` (or the storage error) when it fails.
    public func check(_ requirement: Requirement) throws {
        switch requirement {
        case .storeOrdering: try StoreContractChecks(self).ordering()
        case .storeRanges: try StoreContractChecks(self).ranges()
        case .storeBatches: try StoreContractChecks(self).batches()
        case .storeReopen: try StoreContractChecks(self).reopen()
        case .storeMatchesModel: try StoreModelChecks(self).matchesModel()
        case .storeConcurrentAndReentrant: try StoreModelChecks(self).concurrentAndReentrant()
        case .storeClosed: try StoreModelChecks(self).closed()
        case .storeSnapshotScan: try SnapshotScanChecks(self).oneMoment()
        case .storeInUse: try StoreContractChecks(self).inUse()
        case .cacheRoundTrip: try CacheChecks(self).roundTrip()
        case .cacheLongPaths: try CacheChecks(self).longPaths()
        case .cacheSizeAccounting: try CacheChecks(self).sizeAccounting()
        case .evictionLeastRecentFirst: try EvictionChecks(self).leastRecentFirst()
        case .evictionKeepsActivePinnedAndPending: try EvictionChecks(self).keepsActivePinnedAndPending()
        case .pinningSurvivesRestart: try EvictionChecks(self).pinningSurvivesRestart()
        case .queueOrderAndRestart: try QueueChecks(self).orderAndRestart()
        case .queueGroupCommit: try QueueChecks(self).groupCommit()
        case .queueDurabilityUnderSIGKILL: try CrashChecks(self).durabilityUnderSIGKILL()
        case .queueDiskFull: try CrashChecks(self).diskFull()
        case .corruptStoreRecovery: try RecoveryChecks(self).corruptStore()
        case .unknownFormatRefused: try RecoveryChecks(self).unknownFormat()
        }
    }

    // MARK: - Tally

    private static let tallies = Mutex<[String: (passed: Int, failed: Int, notApplicable: Int)]>([:])

    /// Runs `requirement` and records the outcome; when it is the last of the suite for this
    /// backend, prints `conformance <backend>: N passed, M failed`. Rethrows a failure.
    /// ``checkAndRecord(_:)`` on a thread of its own. The checks block (fsync, child processes
    /// killed and awaited, writer threads), and a blocked thread of Swift's cooperative pool (two
    /// threads on two cores) stalls every other test running at the same time.
    public func checkAndRecordOffThread(_ requirement: Requirement) async throws {
        let outcome: Result<Void, any Error> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Result { try self.checkAndRecord(requirement) })
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        try outcome.get()
    }

    public func checkAndRecord(_ requirement: Requirement) throws {
        var outcome: (any Error)?
        var notApplicable = false
        do {
            try check(requirement)
        } catch let skip as NotApplicable {
            notApplicable = true
            print("conformance \(backend.name): '\(requirement)' does not apply: \(skip.reason)")
        } catch {
            outcome = error
        }
        let summary: String? = Conformance.tallies.withLock { tallies in
            var tally = tallies[backend.name] ?? (0, 0, 0)
            if outcome != nil { tally.failed += 1 } else { tally.passed += 1 }
            if notApplicable { tally.notApplicable += 1 }
            tallies[backend.name] = tally
            guard tally.passed + tally.failed == Requirement.allCases.count else { return nil }
            let extra = tally.notApplicable > 0 ? " (\(tally.notApplicable) not applicable)" : ""
            return "conformance \(backend.name): \(tally.passed) passed, \(tally.failed) failed\(extra)"
        }
        if let summary { print(summary) }
        if let outcome { throw outcome }
    }

    // MARK: - Helpers for the checks

    /// A fresh directory path (not created) under the temporary directory.
    func freshDirectory() -> String {
        StoreTestHelpers.temporaryDirectoryPath(prefix: "conformance-\(backend.name)")
    }

    /// Removes a directory made by ``freshDirectory()`` and anything moved aside next to it.
    func remove(_ directory: String) {
        let parent = (directory as NSString).deletingLastPathComponent
        let name = (directory as NSString).lastPathComponent
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where entry.hasPrefix(name) {
            try? FileManager.default.removeItem(atPath: parent + "/" + entry)
        }
    }

    /// Opens a store in `directory`.
    func openStore(_ directory: String) throws -> any OrderedKeyValueStore { try backend.open(directory) }
}

/// A requirement that was not met.
public struct ConformanceFailure: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

/// Fails with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw ConformanceFailure(message()) }
}
