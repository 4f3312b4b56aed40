import CoreTree
import QueryEngine

/// A `waitForPendingWrites()` call: the writes it waits for, fixed when it was made, and whom to tell.
struct WriteWaiter {
    /// Every write with a smaller id was made before the call (ids only grow); the waiter waits
    /// until none of them is pending.
    let writesBelow: Int64
    /// The block transactions (by record id) alive at the call: a transaction's write gets a new
    /// id each time it runs again, so it is followed by its own id.
    let transactions: Set<Int>
    /// The named transactions (by sequence) alive or waiting for their handler at the call.
    let namedTransactions: Set<Int64>
    /// Hears `nil` once they are all settled, or why the wait ended without that.
    let notify: @Sendable (DatabaseError?) -> Void
}

extension Repo {
    /// Registers a waiter for the writes pending now; `notify` runs (on the repo queue) once the
    /// server has acknowledged or rejected them all, at once when none is pending.
    ///
    /// - Returns: the waiter's id, for ``removeWriteWaiter(_:)``.
    @discardableResult
    func addWriteWaiter(_ notify: @escaping @Sendable (DatabaseError?) -> Void) -> Int {
        perform { addWriteWaiterOnQueue(notify) }
    }

    /// As ``addWriteWaiter(_:)``, for the `async` API: suspends instead of blocking a thread.
    func addWriteWaiter(_ notify: @escaping @Sendable (DatabaseError?) -> Void) async -> Int {
        await performSuspending { $0.addWriteWaiterOnQueue(notify) }
    }

    private func addWriteWaiterOnQueue(_ notify: @escaping @Sendable (DatabaseError?) -> Void) -> Int {
        queue.preconditionOnQueue()
        let id = nextObserverID
        nextObserverID += 1
        if isShutDown {
            notify(Repo.shutDownBeforeWritesSettled)
            return id
        }
        writeWaiters[id] = WriteWaiter(
            writesBelow: nextWriteId,
            transactions: Set(transactions.filter { $0.named == nil }.map(\.id)),
            namedTransactions: liveNamedTransactions,
            notify: notify)
        settleWriteWaiters()
        return id
    }

    /// Forgets a waiter (its task was cancelled).
    func removeWriteWaiter(_ id: Int) {
        queue.preconditionOnQueue()
        writeWaiters[id] = nil
    }

    /// Tells the waiters whose writes are all settled. Called by ``raise(_:checkMetadata:)``,
    /// which every change to the pending writes and transactions goes through.
    ///
    /// - Complexity: O(waiters + transactions) per call; nothing when no one waits.
    func settleWriteWaiters() {
        queue.preconditionOnQueue()
        guard !writeWaiters.isEmpty else { return }
        let oldestWrite = syncTree.pendingWrites.oldestWriteId
        let blockTransactions = Set(transactions.filter { $0.named == nil }.map(\.id))
        let namedTransactions = liveNamedTransactions
        for (id, waiter) in writeWaiters {
            guard oldestWrite.map({ $0 >= waiter.writesBelow }) ?? true,
                  waiter.transactions.isDisjoint(with: blockTransactions),
                  waiter.namedTransactions.isDisjoint(with: namedTransactions)
            else { continue }
            writeWaiters[id] = nil
            waiter.notify(nil)
        }
    }

    /// Ends every wait: the database shut down.
    func failWriteWaiters() {
        let waiters = writeWaiters.values
        writeWaiters = [:]
        for waiter in waiters { waiter.notify(Repo.shutDownBeforeWritesSettled) }
    }

    /// The named transactions not finished: running, or restored and waiting for their handler.
    private var liveNamedTransactions: Set<Int64> {
        Set(transactions.compactMap { $0.named?.sequence } + waitingNamedTransactions.map(\.named.sequence))
    }

    static let shutDownBeforeWritesSettled = DatabaseError(
        .disconnected, "The database was shut down before the server acknowledged every pending write (with persistence on, those still queued are sent at the next start).")
}
