import CoreTree
import SyncProtocol

/// The writes a namespace applied in memory that are not yet durable, and the groups they are
/// committed in (group commit): while one group is being committed, new writes gather into the
/// next. It keeps the version of the last durable write, so a failed commit can be undone down to
/// it, and who waits for the pipeline to run dry (closing). The namespace drives it: it takes a group, commits it, and
/// reports the outcome.
struct CommitPipeline {
    /// A write applied in memory, waiting for its group's commit.
    struct PendingWrite: Sendable {
        /// The updates it causes for listeners, sent once it is durable.
        var deliveries: [Delivery]
        /// What it wrote, server values resolved, in order (what the store commits).
        var writes: [StoreWrite]
        /// Where it changed the tree.
        var changedPaths: [TreePath] { writes.map(\.path) }
        /// Settings committed with it (its client's ledger record).
        var settings: [StoreSetting]
        /// The namespace's number for it (its commit reports the last of its group's).
        var version: UInt64
        /// Its stamp, given back to the ledger if its commit fails.
        var stamp: WriteStamp?
        /// The data at its path afterwards (its acknowledgement reports it).
        var value: Node
        /// Called once with its outcome.
        var completion: @Sendable (WriteResult) -> Void
    }

    /// The version of the last write a successful commit made durable.
    private(set) var durableVersion: UInt64
    private var pending: [PendingWrite] = []
    /// Whether a run of commits is under way.
    private(set) var isRunning = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []

    /// A pipeline whose writes up to `version` are durable.
    init(durableVersion version: UInt64) { durableVersion = version }

    /// Whether writes wait for a commit.
    var hasPending: Bool { !pending.isEmpty }

    /// Queues a write applied in memory.
    mutating func enqueue(_ write: PendingWrite) { pending.append(write) }

    /// Marks a run started when none is and `hasWork`; returns whether the caller must run it.
    mutating func beginRun(hasWork: Bool) -> Bool {
        guard !isRunning, hasWork else { return false }
        isRunning = true
        return true
    }

    /// Takes every waiting write as the next group.
    mutating func takeGroup() -> [PendingWrite] {
        defer { pending = [] }
        return pending
    }

    /// Records that a commit made the writes up to `version` durable.
    mutating func committed(through version: UInt64) { durableVersion = max(durableVersion, version) }

    /// After `group`'s commit failed: the group and every write queued after it, all to be undone
    /// (the pipeline holds none of them any more).
    mutating func failed(_ group: [PendingWrite]) -> [PendingWrite] {
        defer { pending = [] }
        return group + pending
    }

    /// Ends a run; returns the waiters to resume (it ran dry).
    mutating func endRun() -> [CheckedContinuation<Void, Never>] {
        isRunning = false
        defer { idleWaiters = [] }
        return idleWaiters
    }

    /// Adds a waiter for the end of the run under way (call only while ``isRunning``).
    mutating func waitUntilIdle(_ waiter: CheckedContinuation<Void, Never>) { idleWaiters.append(waiter) }
}
