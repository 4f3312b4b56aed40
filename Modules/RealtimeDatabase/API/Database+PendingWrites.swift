import CoreTree
import Dispatch

/// The writes the server has not acknowledged yet, seen and awaited by the app (beyond Firebase).
extension Database {
    /// How many writes made on this client the server has not acknowledged yet: sets, updates,
    /// removals and transactions in flight, including writes restored from disk at start. Also
    /// observable at `/.info/pendingWrites`.
    public var pendingWriteCount: Int {
        let repo = repo
        return repo.perform { repo.pendingWriteCount }
    }

    /// ``pendingWriteCount`` now, then each time it changes (the newest value when the reader is
    /// behind); ends when the database shuts down.
    public var pendingWriteCounts: AsyncStream<Int> { repo.pendingWriteCountStream() }

    /// Returns once every write made before the call has been acknowledged or rejected by the
    /// server: sets, updates, removals, transactions, and writes restored from disk at start
    /// (named transactions restored from disk once their handler is registered and they end).
    /// Writes made after the call do not hold it up. It waits through disconnections and
    /// reconnections, and while offline; it returns at once when nothing is pending.
    ///
    /// ```swift
    /// ref.child("draft").setValue(text)
    /// try await database.waitForPendingWrites()   // the server has the draft, or refused it
    /// ```
    ///
    /// A rejected write does not make it throw (its own completion block hears why, and has run
    /// when this returns), nor does ``purgeOutstandingWrites()``, which settles every write at once.
    ///
    /// - Throws: ``DatabaseError`` with code `disconnected` when the database shuts down first;
    ///   `CancellationError` when the calling task is cancelled first.
    public func waitForPendingWrites() async throws {
        let repo = repo
        let callbacks = repo.callbackQueue
        let done = OneShot<Void, any Error>()
        // Through the callback queue: the writes' own completion blocks have run when it returns.
        let id = await repo.addWriteWaiter { error in callbacks.async { done.settle(error.map { .failure($0) } ?? .success(())) } }
        try await withTaskCancellationHandler {
            try await done.value()
        } onCancel: {
            if done.fail(CancellationError()) { repo.enqueue { repo.removeWriteWaiter(id) } }
        }
    }

    /// Calls `completion` on the callback queue once every write made before the call has been
    /// acknowledged or rejected, as ``waitForPendingWrites()`` returns: with `nil`, or with a
    /// ``DatabaseError`` (`disconnected`) when the database shuts down first.
    public func waitForPendingWrites(completion: @escaping ((any Error)?) -> Void) {
        let box = UncheckedBox(completion)
        let callbacks = repo.callbackQueue
        repo.addWriteWaiter { error in callbacks.async { box.value(error) } }
    }
}
