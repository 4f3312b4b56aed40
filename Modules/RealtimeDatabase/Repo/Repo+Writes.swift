import CoreTree
import Logging
import Persistence
import Presence
import QueryEngine
import SyncClient
import SyncProtocol

/// What a write's completion hears: `nil` on success, else why it failed.
typealias WriteCompletion = @Sendable (DatabaseError?) -> Void

extension Repo {
    // MARK: - Sets and updates

    /// Writes `node` (placeholders unresolved) at `path`: saved to the disk queue, shown to
    /// listeners at once, sent to the server.
    ///
    /// - Throws: ``DatabaseError`` (`invalidArgument`, `storageFailure`); nothing is written then.
    func set(_ node: Node, at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        try Repo.validateWrite(node, at: path)
        try perform { () throws(DatabaseError) in try applySet(node, at: path, completion: completion) }
    }

    /// As ``set(_:at:completion:)``, for the `async` API: suspends (instead of blocking a thread)
    /// until the write is saved to the disk queue and its local events are queued.
    func set(_ node: Node, at path: TreePath, completion: WriteCompletion?) async throws(DatabaseError) {
        try Repo.validateWrite(node, at: path)
        try await performSuspending { (repo: Repo) throws(DatabaseError) in try repo.applySet(node, at: path, completion: completion) }
    }

    private func applySet(_ node: Node, at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        queue.preconditionOnQueue()
        let writeId = nextWriteId
        let estimate = try resolvingServerValues(node, at: path)
        var events: [SyncEvent]
        do {
            events = try syncTree.applyUserOverwrite(path: path, node: estimate, writeId: writeId, stored: node)
        } catch {
            throw DatabaseError(.storageFailure, "The write could not be saved to the local store, so nothing was written: \(DatabaseError.reason(error))", underlying: error)
        }
        nextWriteId += 1
        events += abortTransactions(overlapping: path, because: .overriddenBySet)
        raise(events)
        connection.put(path: path, data: node, stamp: stamps.stamp(writeId), onComplete: onQueue { repo, status in
            repo.writeAcknowledged(writeId, status, completion)
        })
    }

    /// Writes each child (relative path → node, placeholders unresolved) below `path` at once.
    func update(_ children: [(path: TreePath, node: Node)], at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        guard try Repo.validateUpdate(children, at: path) else {
            if let completion { complete { completion(nil) } }
            return
        }
        try perform { () throws(DatabaseError) in try applyUpdate(children, at: path, completion: completion) }
    }

    /// As ``update(_:at:completion:)``, for the `async` API: suspends (instead of blocking a
    /// thread) until the update is saved to the disk queue and its local events are queued.
    func update(_ children: [(path: TreePath, node: Node)], at path: TreePath, completion: WriteCompletion?) async throws(DatabaseError) {
        guard try Repo.validateUpdate(children, at: path) else {
            if let completion { complete { completion(nil) } }
            return
        }
        try await performSuspending { (repo: Repo) throws(DatabaseError) in try repo.applyUpdate(children, at: path, completion: completion) }
    }

    /// Whether an update has anything to write; throws when it is invalid.
    private static func validateUpdate(_ children: [(path: TreePath, node: Node)], at path: TreePath) throws(DatabaseError) -> Bool {
        if InfoTree.contains(path) { throw Repo.infoWriteError(path) }
        do {
            try Validation.validateUpdate(children, at: path)
        } catch {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        }
        return !children.isEmpty
    }

    private func applyUpdate(_ children: [(path: TreePath, node: Node)], at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        queue.preconditionOnQueue()
        let writeId = nextWriteId
        let estimates = try resolved(children, at: path)
        var events: [SyncEvent]
        do {
            events = try syncTree.applyUserMerge(path: path, children: estimates, writeId: writeId, stored: children)
        } catch {
            throw DatabaseError(.storageFailure, "The update could not be saved to the local store, so nothing was written: \(DatabaseError.reason(error))", underlying: error)
        }
        nextWriteId += 1
        for child in children {
            events += abortTransactions(overlapping: path.appending(child.path), because: .overriddenBySet)
        }
        raise(events)
        connection.merge(path: path, children: children, stamp: stamps.stamp(writeId), onComplete: onQueue { repo, status in
            repo.writeAcknowledged(writeId, status, completion)
        })
    }

    /// Children with their server values estimated from the local data and clock.
    ///
    /// - Throws: ``DatabaseError`` (`invalidArgument`) when an increment overflows.
    func resolved(_ children: [(path: TreePath, node: Node)], at path: TreePath) throws(DatabaseError) -> [(path: TreePath, node: Node)] {
        var result: [(path: TreePath, node: Node)] = []
        for child in children {
            result.append((child.path, try resolvingServerValues(child.node, at: path.appending(child.path))))
        }
        return result
    }

    /// `node` with its server values (timestamps, increments) estimated from the local data and
    /// clock; the data is only read when there are placeholders.
    ///
    /// - Throws: ``DatabaseError`` (`invalidArgument`) when an increment's sum is not finite.
    func resolvingServerValues(_ node: Node, at path: TreePath) throws(DatabaseError) -> Node {
        guard CoreTree.ServerValue.containsPlaceholder(node) else { return node }
        do {
            return try CoreTree.ServerValue.resolve(
                node, existing: syncTree.calcCompleteEventCache(path: path), serverTime: serverTime, at: path)
        } catch {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        }
    }

    /// The estimate for a write restored from disk: as ``resolvingServerValues(_:at:)``, or, when
    /// an increment would overflow the local data, the increment alone (the server decides).
    func restoredEstimate(_ node: Node, at path: TreePath) -> Node {
        if let estimate = try? resolvingServerValues(node, at: path) { return estimate }
        return (try? CoreTree.ServerValue.resolve(node, existing: .empty, serverTime: serverTime, at: path)) ?? node
    }

    /// The server answered a write: drop it from the queue, revert it if rejected, tell the caller.
    func writeAcknowledged(_ writeId: Int64, _ status: RequestStatus, _ completion: WriteCompletion?) {
        stamps.settle(writeId)
        if status.status == .writeCanceled {
            // purgeOutstandingWrites() already reverted it.
            if let completion { complete { completion(DatabaseError(.writeCanceled, DatabaseError.defaultMessage(for: .writeCanceled))) } }
            return
        }
        let error = status.isOK ? nil : DatabaseError(status: status.status, message: status.message)
        if let error { Repo.logger.warning("A write was rejected by the server and reverted: \(error)") }
        raise(syncTree.ackUserWrite(writeId: writeId, revert: !status.isOK))
        if let completion { complete { completion(error) } }
        sendReadyTransactions()
    }

    /// Resends the writes the disk queue kept from an earlier run, in order, and shows them (they
    /// are on disk already; the sync tree removes each record when its write is acknowledged).
    func restoreWrites() {
        guard let persistence else { return }
        let records: [Persistence.UserWriteRecord]
        do {
            records = try persistence.userWrites()
        } catch {
            Repo.logger.error("The queued writes could not be read: \(error)")
            return
        }
        for record in records {
            let writeId = record.writeId
            nextWriteId = max(nextWriteId, writeId + 1)
            let ack: @Sendable (RequestStatus) -> Void = onQueue { repo, status in repo.writeAcknowledged(writeId, status, nil) }
            switch record.kind {
            case .overwrite(let node):
                connection.put(path: record.path, data: node, stamp: stamps.stamp(writeId), onComplete: ack)
                raise((try? syncTree.applyUserOverwrite(
                    path: record.path, node: restoredEstimate(node, at: record.path), writeId: writeId, persist: false)) ?? [])
            case .merge(let entries):
                let children = entries.map { (path: $0.path, node: $0.node) }
                connection.merge(path: record.path, children: children, stamp: stamps.stamp(writeId), onComplete: ack)
                let estimated = children.map { (path: $0.path, node: restoredEstimate($0.node, at: record.path.appending($0.path))) }
                raise((try? syncTree.applyUserMerge(
                    path: record.path, children: estimated, writeId: writeId, persist: false)) ?? [])
            case .transaction(let name, let arguments):
                restoreNamedTransaction(record, name: name, arguments: arguments)
            }
        }
        if !records.isEmpty { Repo.logger.info("Restored \(records.count) queued writes from the local store.") }
    }

    /// Drops every unacknowledged write, locally, on disk and in the connection.
    func purgeOutstandingWrites() {
        perform {
            var events = syncTree.removeAllWrites()
            for record in transactions {
                events += finishTransaction(record, error: DatabaseError(.writeCanceled, DatabaseError.defaultMessage(for: .writeCanceled)), revert: false)
            }
            // Restored named transactions still waiting for their handlers go with the queue.
            for (_, named) in waitingNamedTransactions { persistence?.removeUserWrite(writeId: named.sequence) }
            waitingNamedTransactions.removeAll()
            raise(events)
            stamps.settleAll()
            connection.purgeOutstandingWrites()
        }
    }

    // MARK: - Validation

    static func validateWrite(_ node: Node, at path: TreePath) throws(DatabaseError) {
        if InfoTree.contains(path) { throw infoWriteError(path) }
        do {
            try Validation.validateWrite(node, at: path)
        } catch {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        }
    }

    static func infoWriteError(_ path: TreePath) -> DatabaseError {
        DatabaseError(.invalidArgument, "\(path.wireForm) is in /.info, which is read-only.")
    }
}
