import CoreTree
import Logging
import Persistence

/// Named transactions: a transaction whose update is a handler registered by name, so the
/// request (name, location, arguments) can be kept in the disk queue with the writes. After a
/// restart it runs again once its handler is registered, and its exactly-once stamp (its place in
/// the queue) makes the server apply it once, also when the first run's commit reached the server
/// just before the process died.
extension Repo {
    /// Queues a named transaction and starts it.
    func startNamedTransaction(at path: TreePath, name: String, arguments: Node, completion: TransactionRecord.Completion?) {
        perform { beginNamedTransaction(at: path, name: name, arguments: arguments, completion: completion) }
    }

    /// As ``startNamedTransaction(at:name:arguments:completion:)``, for the `async` API: suspends
    /// (instead of blocking a thread) until the request is in the disk queue and has run once.
    func startNamedTransaction(at path: TreePath, name: String, arguments: Node, completion: TransactionRecord.Completion?) async {
        await performSuspending { $0.beginNamedTransaction(at: path, name: name, arguments: arguments, completion: completion) }
    }

    private func beginNamedTransaction(at path: TreePath, name: String, arguments: Node, completion: TransactionRecord.Completion?) {
        queue.preconditionOnQueue()
        guard let entry = transactionHandlers.entry(named: name) else {
            let error = DatabaseError(
                .invalidArgument, "No transaction handler is registered as \"\(name)\"; register it with Database.registerTransaction(named:_:) at start-up.")
            if let completion { complete { completion(error, false, nil) } }
            return
        }
        let sequence = nextWriteId
        nextWriteId += 1
        do {
            try persistence?.saveNamedTransaction(path: path, name: name, arguments: arguments, writeId: sequence)
        } catch {
            let failure = DatabaseError(.storageFailure, "The transaction could not be saved to the local store, so it did not run: \(DatabaseError.reason(error))", underlying: error)
            if let completion { complete { completion(failure, false, nil) } }
            return
        }
        _ = stamps.stamp(sequence)
        launch(TransactionRecord.Named(name: name, arguments: arguments, sequence: sequence), at: path, handler: entry.handler, completion: completion)
    }

    /// Keeps a named transaction read from the disk queue until its handler is registered.
    func restoreNamedTransaction(_ record: Persistence.UserWriteRecord, name: String, arguments: Node) {
        _ = stamps.stamp(record.writeId)
        waitingNamedTransactions.append((record.path, TransactionRecord.Named(name: name, arguments: arguments, sequence: record.writeId)))
    }

    /// Starts the restored named transactions whose handlers are registered now, oldest first.
    func resumeNamedTransactions() {
        perform {
            var stillWaiting: [(path: TreePath, named: TransactionRecord.Named)] = []
            for (path, named) in waitingNamedTransactions {
                guard let entry = transactionHandlers.entry(named: named.name) else {
                    stillWaiting.append((path, named))
                    continue
                }
                Repo.logger.info("Running transaction \"\(named.name)\" at \(path.wireForm) again: it was queued before the last restart.")
                launch(named, at: path, handler: entry.handler, completion: entry.restoredCompletion)
            }
            waitingNamedTransactions = stillWaiting
        }
    }

    private func launch(_ named: TransactionRecord.Named, at path: TreePath, handler: @escaping TransactionHandlers.Handler,
                        completion: TransactionRecord.Completion?) {
        let arguments = named.arguments.isEmpty ? nil : named.arguments.foundationValue()
        let box = UncheckedBox(arguments)
        startTransaction(at: path, update: { data in handler(data, box.value) }, completion: completion, applyLocally: true, named: named)
    }
}
