import Synchronization

/// The race between a bounded transaction's deadline and its `COMMIT`, settled once.
///
/// Cancelling the task of a transaction whose time ran out does not stop it: its closure may
/// go on and commit after the caller was told it failed (a node reported "nothing was written"
/// for a write that then appeared). The transaction calls ``enterCommit()`` as its last step and
/// rolls back if the deadline came first; the deadline calls ``abandon()`` and learns whether
/// the `COMMIT` was already on its way, when the outcome is unknown.
final class CommitGate: Sendable {
    private enum Phase { case working, committing, abandoned }
    private let phase = Mutex(Phase.working)

    init() {}

    /// Called by the transaction just before it commits.
    ///
    /// - Throws: ``PostgresStoreError`` when the deadline passed first: the transaction then
    ///   rolls back, and nothing it did is written.
    func enterCommit() throws(PostgresStoreError) {
        let entered = phase.withLock { phase in
            guard phase == .working else { return false }
            phase = .committing
            return true
        }
        if !entered { throw PostgresStoreError("The transaction ran past its deadline and was rolled back.") }
    }

    /// Called when the deadline passes (or the caller gives up): returns `true` when the
    /// transaction had not begun to commit (it never will), `false` when its `COMMIT` was sent.
    func abandon() -> Bool {
        phase.withLock { phase in
            if phase == .committing { return false }
            phase = .abandoned
            return true
        }
    }
}
