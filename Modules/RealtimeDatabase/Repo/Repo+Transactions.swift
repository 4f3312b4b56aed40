import CoreTree
import Persistence
import QueryEngine
import SyncClient
import SyncProtocol

/// Transactions: run the block on the local data (listeners see the result at once), then
/// compare-and-set on the server with the hash of the data the block saw. On `datastale` the
/// block runs again on fresh data, at most 25 times. Transactions at overlapping locations go to
/// the server one at a time, in order; made offline, they wait and run on reconnect. Like the
/// Firebase clients, block transactions are not kept on disk across restarts; named ones are
/// (Repo+NamedTransactions).
extension Repo {
    func startTransaction(
        at path: TreePath, update: @escaping TransactionRecord.Update, completion: TransactionRecord.Completion?, applyLocally: Bool,
        named: TransactionRecord.Named? = nil
    ) {
        perform { beginTransaction(at: path, update: update, completion: completion, applyLocally: applyLocally, named: named) }
    }

    /// As ``startTransaction(at:update:completion:applyLocally:named:)``, for the `async` API:
    /// suspends (instead of blocking a thread) until the block has run once and its local events
    /// are queued.
    func startTransaction(
        at path: TreePath, update: @escaping TransactionRecord.Update, completion: TransactionRecord.Completion?, applyLocally: Bool
    ) async {
        // The app's block is not `Sendable`; it runs on the repo queue only.
        let box = UncheckedBox(update)
        await performSuspending { repo in
            repo.beginTransaction(at: path, update: box.value, completion: completion, applyLocally: applyLocally, named: nil)
        }
    }

    private func beginTransaction(
        at path: TreePath, update: @escaping TransactionRecord.Update, completion: TransactionRecord.Completion?, applyLocally: Bool,
        named: TransactionRecord.Named?
    ) {
        queue.preconditionOnQueue()
        // A hidden observer keeps the location listened to, so retries see fresh data.
        let registration = ObserverRegistration(handle: 0, eventType: .value, callback: nil, cancel: nil)
        raise(syncTree.addEventRegistration(registration, for: .default(at: path)))
        let record = TransactionRecord(
            id: nextTransactionId, path: path, update: update, completion: completion,
            applyLocally: applyLocally, registration: registration, named: named)
        nextTransactionId += 1
        guard run(record, on: syncTree.calcCompleteEventCache(path: path)) else { return }
        transactions.append(record)
        sendReadyTransactions()
    }

    /// Runs the block on `input` and applies its result locally. Returns false if the
    /// transaction finished (aborted by the block, or an invalid result).
    private func run(_ record: TransactionRecord, on input: Node) -> Bool {
        let data = MutableData(node: input)
        let result = record.update(data)
        guard let committed = result.value else {
            raise(finishTransaction(record, error: nil, revert: true, committed: false))
            return false
        }
        if let invalid = committed.holder.invalidValue {
            raise(finishTransaction(record, error: invalid, revert: true))
            return false
        }
        let output = committed.holder.node
        do {
            try Repo.validateWrite(output, at: record.path)
        } catch {
            raise(finishTransaction(record, error: error, revert: true))
            return false
        }
        var events: [SyncEvent] = []
        if record.writeId != 0 { events += syncTree.ackUserWrite(writeId: record.writeId, revert: true, persist: false) }
        record.input = input
        record.output = output
        record.writeId = nextWriteId
        nextWriteId += 1
        let resolvedOutput: Node
        do {
            resolvedOutput = try CoreTree.ServerValue.resolve(output, existing: input, serverTime: serverTime, at: record.path)
        } catch {
            raise(events + finishTransaction(record, error: DatabaseError(.invalidArgument, error.message, underlying: error), revert: true))
            return false
        }
        record.resolvedOutput = resolvedOutput
        events += (try? syncTree.applyUserOverwrite(
            path: record.path, node: resolvedOutput, writeId: record.writeId, visible: record.applyLocally, persist: false)) ?? []
        raise(events)
        return true
    }

    /// Sends each waiting transaction that no earlier transaction overlaps, when connected.
    func sendReadyTransactions() {
        guard isConnected else { return }
        var blocked: [TreePath] = []
        for record in transactions {
            if record.status == .waiting && !blocked.contains(where: record.overlaps) {
                send(record)
            }
            if transactions.contains(where: { $0 === record }) { blocked.append(record.path) }
        }
    }

    private func send(_ record: TransactionRecord) {
        // The data the server should hold now: the cache and earlier writes, without the
        // transactions' own writes at this location.
        let excluded = transactions.filter { $0.overlaps(record.path) }.map(\.writeId)
        let current = syncTree.calcCompleteEventCache(path: record.path, excluding: excluded)
        if current.hash != record.input.hash {
            // The data changed since the block ran: run it again before sending.
            record.retries += 1
            guard record.retries <= TransactionRecord.maxRetries else {
                raise(finishTransaction(record, error: DatabaseError(.maxRetries, DatabaseError.defaultMessage(for: .maxRetries)), revert: true))
                return
            }
            guard run(record, on: current) else { return }
        }
        record.status = .sent
        let writeId = record.writeId
        let stamp = record.named.map { stamps.stamp($0.sequence) }
        connection.put(path: record.path, data: record.output, hash: current.hash, stamp: stamp, onComplete: onQueue { repo, status in
            guard let record = repo.transactions.first(where: { $0.writeId == writeId }) else { return }
            repo.transactionAnswered(record, status)
        })
    }

    private func transactionAnswered(_ record: TransactionRecord, _ status: RequestStatus) {
        if record.status == .sentNeedsAbort {
            raise(finishTransaction(record, error: DatabaseError(.overriddenBySet, DatabaseError.defaultMessage(for: .overriddenBySet)), revert: true))
        } else if status.isOK {
            raise(finishTransaction(record, error: nil, revert: false))
        } else if status.status == .disconnected, record.named != nil {
            // Maybe applied, maybe not: its stamp makes sending it again safe. It goes on reconnect.
            record.status = .waiting
        } else if status.status == .dataStale {
            // Runs again, on fresh data, when it is sent next.
            record.status = .waiting
            if record.retries >= TransactionRecord.maxRetries {
                raise(finishTransaction(record, error: DatabaseError(.maxRetries, DatabaseError.defaultMessage(for: .maxRetries)), revert: true))
            }
        } else {
            raise(finishTransaction(record, error: DatabaseError(status: status.status, message: status.message), revert: true))
        }
        sendReadyTransactions()
    }

    /// Aborts the transactions at, above or below `path` (a set or update replaced their data).
    func abortTransactions(overlapping path: TreePath, because code: DatabaseError.Code) -> [SyncEvent] {
        var events: [SyncEvent] = []
        for record in transactions where record.overlaps(path) {
            switch record.status {
            case .waiting:
                events += finishTransaction(record, error: DatabaseError(code, DatabaseError.defaultMessage(for: code)), revert: true)
            case .sent:
                record.status = .sentNeedsAbort
            case .sentNeedsAbort:
                break
            }
        }
        return events
    }

    /// Ends a transaction: removes it, its local write (reverted or acknowledged) and its hidden
    /// observer, and calls its completion with what it committed, or else with the data now at
    /// its location.
    func finishTransaction(_ record: TransactionRecord, error: DatabaseError?, revert: Bool, committed: Bool? = nil) -> [SyncEvent] {
        transactions.removeAll { $0 === record }
        if let named = record.named {
            stamps.settle(named.sequence)
            persistence?.removeUserWrite(writeId: named.sequence)
        }
        let didCommit = committed ?? (error == nil)
        // Committed: the value the server accepted. The cache may not hold it (a transaction
        // queued offline, with no listener on its location, sees no server data after its ack).
        let committedValue = didCommit && !revert ? record.resolvedOutput : nil
        var events: [SyncEvent] = []
        if record.writeId != 0 {
            events += syncTree.ackUserWrite(writeId: record.writeId, revert: revert, persist: false)
            record.writeId = 0
        }
        events += syncTree.removeEventRegistration(record.registration, for: .default(at: record.path))
        if let completion = record.completion, database == nil {
            // The database is gone: the completion still hears how the transaction ended.
            let reason = error ?? DatabaseError(.disconnected, "The database was shut down before the transaction finished.")
            complete { completion(reason, false, nil) }
        } else if let completion = record.completion, let database {
            let snapshot = DataSnapshot(
                node: committedValue ?? syncTree.calcCompleteEventCache(path: record.path),
                ref: DatabaseReference(database: database, path: record.path))
            complete { completion(error, didCommit, snapshot) }
        }
        return events
    }
}
