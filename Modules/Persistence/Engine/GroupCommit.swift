import Foundation

/// Lets concurrent writers share syncs (group commit): each writer hands in its batch; one of
/// them (the leader) writes every batch handed in so far as one durable batch, in arrival order,
/// while the others wait for the outcome. Writers that arrive during that sync form the next
/// group. N concurrent writers thus cost about one sync per round, not N.
///
/// A group is one atomic batch: if it fails (a full disk, say), every writer in it gets the
/// error and none of its batches is applied.
final class GroupCommit: @unchecked Sendable {
    // All state is guarded by `condition`.
    private let condition = NSCondition()
    private var nextTicket: UInt64 = 0
    private var waiting: [(ticket: UInt64, batch: WriteBatch)] = []
    private var outcomes: [UInt64: (any Error)?] = [:]
    private var isWriting = false
    private var syncs = 0

    /// How many durable writes ran (for the benchmark and tests).
    var syncCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncs
    }

    /// Returns once `batch` is durably written by `write` (with other writers' batches), or
    /// throws the error that writing its group failed with.
    func commit(_ batch: WriteBatch, write: (WriteBatch) throws -> Void) throws {
        condition.lock()
        defer { condition.unlock() }
        let ticket = nextTicket
        nextTicket += 1
        waiting.append((ticket, batch))
        while true {
            if let outcome = outcomes.removeValue(forKey: ticket) {
                if let outcome { throw outcome }
                return
            }
            if isWriting {
                condition.wait()
                continue
            }
            isWriting = true
            let group = waiting
            waiting = []
            condition.unlock()
            var merged = WriteBatch()
            for entry in group { merged.append(contentsOf: entry.batch) }
            var failure: (any Error)?
            do { try write(merged) } catch { failure = error }
            condition.lock()
            isWriting = false
            syncs += 1
            for entry in group { outcomes[entry.ticket] = .some(failure) }
            condition.broadcast()
        }
    }
}
