import CoreTree

extension DatabaseReference {
    /// Atomically changes the data here: `block` gets the current data and returns
    /// `.success(withValue:)` or `.abort()`. It may run several times (when the server's data
    /// differs from the local copy, at most 25 times); keep it free of side effects. Made
    /// offline, the transaction waits and runs on reconnect. Not kept across restarts.
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) {
        runTransactionBlock(block, andCompletionBlock: nil, withLocalEvents: true)
    }

    /// Runs a transaction; `completionBlock` hears whether it committed and the final data.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: @escaping ((any Error)?, Bool, DataSnapshot?) -> Void
    ) {
        runTransactionBlock(block, andCompletionBlock: completionBlock, withLocalEvents: true)
    }

    /// Runs a transaction; with `localEvents` false, listeners see only the committed result,
    /// not each local attempt.
    public func runTransactionBlock(
        _ block: @escaping (MutableData) -> TransactionResult,
        andCompletionBlock completionBlock: (((any Error)?, Bool, DataSnapshot?) -> Void)?,
        withLocalEvents localEvents: Bool
    ) {
        precondition(path.firstKey != .info, "Transactions are not allowed on /.info locations.")
        database.repo.startTransaction(at: path, update: block, completion: TransactionRecord.completion(completionBlock), applyLocally: localEvents)
    }

    /// Runs a transaction and returns whether it committed and the final data.
    ///
    /// - Throws: ``DatabaseError`` (`maxretry`, `disconnected`, `overriddenbyset`, rule denials).
    public func runTransactionBlock(_ block: @escaping (MutableData) -> TransactionResult) async throws -> (Bool, DataSnapshot) {
        precondition(path.firstKey != .info, "Transactions are not allowed on /.info locations.")
        let outcome = OneShot<(Bool, DataSnapshot), DatabaseError>()
        await database.repo.startTransaction(at: path, update: block, completion: { error, committed, snapshot in
            outcome.settle(DatabaseReference.transactionOutcome(error: error, committed: committed, snapshot: snapshot))
        }, applyLocally: true)
        return try await outcome.value()
    }

    /// A transaction's outcome, as its completion block hears it, as the async forms return it.
    static func transactionOutcome(error: DatabaseError?, committed: Bool, snapshot: DataSnapshot?) -> Result<(Bool, DataSnapshot), DatabaseError> {
        if let error { return .failure(error) }
        // Never a made-up empty snapshot: without data there is an error to report.
        guard let snapshot else { return .failure(DatabaseError(.disconnected, "The transaction ended without its data.")) }
        return .success((committed, snapshot))
    }
}
