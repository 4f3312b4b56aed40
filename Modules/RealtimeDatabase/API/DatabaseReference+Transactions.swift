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
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Bool, DataSnapshot), any Error>) in
            runTransactionBlock(block, andCompletionBlock: { error, committed, snapshot in
                DatabaseReference.resume(continuation, error: error, committed: committed, snapshot: snapshot)
            }, withLocalEvents: true)
        }
    }

    /// Ends an async transaction call with a transaction's outcome as its completion block hears it.
    static func resume(
        _ continuation: CheckedContinuation<(Bool, DataSnapshot), any Error>, error: (any Error)?, committed: Bool, snapshot: DataSnapshot?
    ) {
        if let error {
            continuation.resume(throwing: error)
        } else if let snapshot {
            continuation.resume(returning: (committed, snapshot))
        } else {
            // Never a made-up empty snapshot: without data there is an error to report.
            continuation.resume(throwing: DatabaseError(.disconnected, "The transaction ended without its data."))
        }
    }
}
