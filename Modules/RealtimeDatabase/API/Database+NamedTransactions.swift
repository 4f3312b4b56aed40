import CoreTree

extension Database {
    /// Registers the transaction handler `name`, for
    /// ``DatabaseReference/runTransaction(named:arguments:andCompletionBlock:)``. Register every
    /// handler at start-up, before or right after the first ``reference()``: transactions queued
    /// before the last restart (or crash) run again as soon as their handler is registered.
    ///
    /// Beyond Firebase: a `runTransactionBlock` block cannot be kept on disk, so Firebase loses a
    /// transaction made offline when the app restarts. A named transaction is kept in the write
    /// queue (its name, location and arguments), runs again after a restart, and is applied
    /// exactly once by an rtdb-server (see the README's "Beyond Firebase").
    ///
    /// - Parameters:
    ///   - name: 1 to 256 characters, no control characters. Registering a name again replaces
    ///     its handler.
    ///   - handler: gets the current data and the arguments (`nil` when none) and returns
    ///     `.success(withValue:)` or `.abort()`. Like a transaction block it may run several
    ///     times; keep it free of side effects.
    ///   - completion: hears how transactions restored from disk end (the completion given to
    ///     `runTransaction(named:)` before the restart is gone with its process).
    public func registerTransaction(
        named name: String, _ handler: @escaping (MutableData, Any?) -> TransactionResult,
        completion: (((any Error)?, Bool, DataSnapshot?) -> Void)? = nil
    ) {
        precondition(TransactionHandlers.isValidName(name), "A transaction name has 1 to 256 characters and no control characters: \(name.debugDescription)")
        transactionHandlers.register(name, .init(handler: handler, restoredCompletion: TransactionRecord.completion(completion)))
        startedRepo?.resumeNamedTransactions()
    }
}

extension DatabaseReference {
    /// Runs the transaction handler registered as `name` here, with `arguments` (a JSON-like
    /// value, as for `setValue`; `nil` for none). The request is kept in the write queue with
    /// the writes: made offline or interrupted by a restart, it runs again (once its handler is
    /// registered) and is applied exactly once. Otherwise it behaves as ``runTransactionBlock(_:andCompletionBlock:)``.
    ///
    /// `completionBlock` hears the outcome in this run of the app; after a restart the
    /// registration's `completion` does. Errors: ``DatabaseError`` `invalidArgument` when no
    /// handler is registered as `name` or the arguments are not valid data; the transaction
    /// errors (`maxretry`, `overriddenbyset`, rule denials).
    public func runTransaction(
        named name: String, arguments: Any? = nil, andCompletionBlock completionBlock: (((any Error)?, Bool, DataSnapshot?) -> Void)? = nil
    ) {
        precondition(path.firstKey != .info, "Transactions are not allowed on /.info locations.")
        let completion = TransactionRecord.completion(completionBlock)
        let node: Node
        do {
            node = try ValueConversion.node(from: arguments)
        } catch {
            if let completion { database.repo.complete { completion(error, false, nil) } }
            return
        }
        database.repo.startNamedTransaction(at: path, name: name, arguments: node, completion: completion)
    }

    /// Runs the named transaction `name` here and returns whether it committed and the final data.
    ///
    /// - Throws: ``DatabaseError`` as ``runTransaction(named:arguments:andCompletionBlock:)`` reports.
    public func runTransaction(named name: String, arguments: Any? = nil) async throws -> (Bool, DataSnapshot) {
        precondition(path.firstKey != .info, "Transactions are not allowed on /.info locations.")
        let node = try ValueConversion.node(from: arguments)
        let outcome = OneShot<(Bool, DataSnapshot), DatabaseError>()
        await database.repo.startNamedTransaction(at: path, name: name, arguments: node, completion: { error, committed, snapshot in
            outcome.settle(DatabaseReference.transactionOutcome(error: error, committed: committed, snapshot: snapshot))
        })
        return try await outcome.value()
    }
}
