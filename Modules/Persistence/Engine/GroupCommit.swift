import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Lets concurrent writers share syncs (group commit): each writer hands in its batch; one of
/// them (the leader) writes every batch handed in so far as one durable batch, in arrival order,
/// while the others wait for the outcome. Writers that arrive during that sync form the next
/// group, led by the first of them. N concurrent writers thus cost about one sync per round, not N.
///
/// Writers released by one sync come back a moment later with their next batch; a leader that
/// wrote at once would find only the few that were quicker and split the writers into two
/// alternating half-size groups (about 0.25 syncs per write with 8 writers). So a leader first
/// gathers: it waits until as many writers are waiting as its previous group held, or at most as
/// long as the previous write took. A lone writer never waits (its previous group was itself);
/// when writers go away the group shrinks at the next deadline, and when more come it grows at once.
///
/// Each waiting writer sleeps on its own semaphore and is woken alone, with its outcome, so a
/// finished group does not wake every waiter to fight over one lock.
///
/// A group is one atomic batch: if it fails (a full disk, say), every writer in it gets the
/// error and none of its batches is applied.
final class GroupCommit: Sendable {
    /// One writer waiting for its group's outcome, or for its turn to lead.
    private final class Waiter: Sendable {
        private static let spinning = 0, sleeping = 1, woken = 2
        private let state = Atomic<Int>(0)
        /// A semaphore, not a continuation: the writers are synchronous callers on threads of
        /// their own (the client's repo queue, a tool's writer threads), never on the cooperative
        /// pool, and a thread that waits for its group's fsync has nothing else to do.
        private let semaphore = DispatchSemaphore(value: 0)
        /// Set before the waiter is woken: the group's outcome, or nil when this writer is to
        /// lead the next group.
        private let result = Mutex<Result<Void, any Error>?>(nil)

        var outcome: Result<Void, any Error>? {
            get { result.withLock { $0 } }
            set { result.withLock { $0 = newValue } }
        }

        /// Returns once `wake()` was called: yields the processor for up to `spin` (woken threads
        /// are slow to get back on a processor, and writers come back within a sync's time),
        /// then sleeps, until `timeout` when given. Returns whether it was woken.
        @discardableResult
        func wait(spin: Duration, timeout: Duration? = nil) -> Bool {
            let clock = ContinuousClock()
            let start = clock.now
            while clock.now - start < spin {
                if state.load(ordering: .acquiring) == Waiter.woken { return true }
                sched_yield()
            }
            guard state.compareExchange(expected: Waiter.spinning, desired: Waiter.sleeping, ordering: .acquiringAndReleasing).exchanged else {
                return true
            }
            guard let timeout else {
                semaphore.wait()
                return true
            }
            let remaining = max(.zero, timeout - (clock.now - start))
            let nanoseconds = remaining.components.seconds * 1_000_000_000 + remaining.components.attoseconds / 1_000_000_000
            if semaphore.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success { return true }
            // Timed out; a wake() racing with it has signalled or is about to: take that signal.
            if state.exchange(Waiter.spinning, ordering: .acquiringAndReleasing) == Waiter.woken { semaphore.wait(); return true }
            return false
        }

        func wake() {
            if state.exchange(Waiter.woken, ordering: .acquiringAndReleasing) == Waiter.sleeping { semaphore.signal() }
        }
    }

    private struct Entry {
        let batch: WriteBatch
        let waiter: Waiter
    }

    private struct State {
        var waiting: [Entry] = []
        var isWriting = false
        var syncs = 0
        /// How many batches the previous group held: the next leader waits for as many.
        var previousGroupSize = 1
        /// How long the previous durable write took: the longest a leader waits for its group.
        var previousWriteDuration = Duration.zero
        /// While a leader gathers: the number of waiting batches it waits for, and the leader.
        var gathering: (target: Int, leader: Waiter)?
    }

    private let state = Mutex(State())
    private let clock = ContinuousClock()

    /// How many durable writes ran (for the benchmark and tests).
    var syncCount: Int { state.withLock { $0.syncs } }

    /// Returns once `batch` is durably written by `write` (with other writers' batches), or
    /// throws the error that writing its group failed with.
    func commit(_ batch: WriteBatch, write: (WriteBatch) throws -> Void) throws {
        let me = Waiter()
        let (spinLimit, mustWait) = state.withLock { state in
            let spinLimit = min(state.previousWriteDuration * 2, .microseconds(500))
            state.waiting.append(Entry(batch: batch, waiter: me))
            if let gathering = state.gathering, state.waiting.count >= gathering.target {
                state.gathering = nil
                gathering.leader.wake()
            }
            defer { state.isWriting = true }
            return (spinLimit, state.isWriting)
        }
        if mustWait {
            me.wait(spin: spinLimit)
            if let outcome = me.outcome { return try outcome.get() }
            // Promoted: the previous leader handed over with `isWriting` still set.
        }
        gatherGroup()
        let group = state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }

        var merged = WriteBatch()
        for entry in group { merged.append(contentsOf: entry.batch) }
        let started = clock.now
        let outcome = Result { try write(merged) }
        let duration = clock.now - started

        let nextLeader = state.withLock { state in
            state.syncs += 1
            state.previousGroupSize = group.count
            state.previousWriteDuration = duration
            let nextLeader = state.waiting.first?.waiter
            if nextLeader == nil { state.isWriting = false }
            return nextLeader
        }
        for entry in group where entry.waiter !== me {
            entry.waiter.outcome = outcome
            entry.waiter.wake()
        }
        nextLeader?.wake()
        try outcome.get()
    }

    /// Waits (as leader, without holding the lock) until the previous group's number of batches
    /// is waiting or the previous write's duration has passed.
    private func gatherGroup() {
        let gathering: (leader: Waiter, limit: Duration)? = state.withLock { state in
            guard state.waiting.count < state.previousGroupSize, state.previousWriteDuration != .zero else { return nil }
            let leader = Waiter()
            state.gathering = (state.previousGroupSize, leader)
            return (leader, min(state.previousWriteDuration, .milliseconds(100)))
        }
        guard let (leader, limit) = gathering else { return }
        leader.wait(spin: min(limit, .milliseconds(2)), timeout: limit)
        state.withLock { $0.gathering = nil }
    }
}
