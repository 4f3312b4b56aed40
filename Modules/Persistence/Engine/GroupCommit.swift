import Foundation

/// Lets concurrent writers share syncs: each writer commits without syncing, then waits until a
/// sync that started after its commit has finished. One waiting writer runs the sync for all the
/// others that committed before it started (group commit), so N concurrent writers cost about one
/// sync per round, not N.
final class GroupCommit: @unchecked Sendable {
    // All state is guarded by `condition`.
    private let condition = NSCondition()
    private var committed: UInt64 = 0
    private var synced: UInt64 = 0
    private var isSyncing = false
    private var syncs = 0

    /// How many syncs ran (for the benchmark and tests).
    var syncCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncs
    }

    /// Records a commit that needs a sync; call it right after the commit, in commit order.
    func noteCommit() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        committed += 1
        return committed
    }

    /// Returns once a sync that started after commit `ticket` has finished, running `sync` itself
    /// when no other writer is syncing.
    func waitUntilDurable(_ ticket: UInt64, sync: () throws -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        while synced < ticket {
            if isSyncing {
                condition.wait()
                continue
            }
            isSyncing = true
            let target = committed
            condition.unlock()
            var failure: (any Error)?
            do { try sync() } catch { failure = error }
            condition.lock()
            isSyncing = false
            syncs += 1
            if failure == nil { synced = max(synced, target) }
            condition.broadcast()
            if let failure { throw failure }
        }
    }
}
