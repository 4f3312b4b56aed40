import CoreTree
import Synchronization
import Logging
import SecurityRules
import SyncProtocol

/// A namespace several nodes share (``SharedServerStore``): writes are decided under the
/// store's write lock against the committed tree, after catching up with what other nodes
/// committed, and applied in memory only once they are committed.
extension NamespaceDatabase {
    /// A write waiting for the next exclusive commit.
    struct SharedPendingWrite: Sendable {
        var operation: WriteOperation
        var condition: WriteCondition?
        var stamp: WriteStamp?
        var caller: Caller
        var completion: @Sendable (WriteResult) -> Void
    }

    /// Catches up with other nodes' commits when the pipeline is free (now, or after the commit
    /// in flight).
    func catchUp() {
        follower.wantCatchUp()
        startCommitting()
    }

    /// Commits the waiting writes in groups, one exclusive commit per group, and catches up when
    /// asked to; returns when nothing waits.
    func runSharedCommits(_ shared: any SharedServerStore) async {
        while follower.hasWork {
            guard let group = follower.next() else {
                do {
                    let entries = try await shared.changes(after: follower.sequence)
                    await startTurn()
                    defer { endTurn() }
                    try await catchUpNow(with: entries, from: shared)
                } catch {
                    // The next wake-up or periodic check tries again; reads serve from memory meanwhile.
                    SharedLog.logger.warning("cannot catch up with the shared store", metadata: ["namespace": "\(name)", "error": "\(error)"])
                }
                continue
            }
            let decisions = DecisionsTaken()
            do {
                let reached = try await shared.commitExclusively(after: follower.sequence) { missed in
                    try await self.decideUnderLock(group, missed: missed, from: shared, taken: decisions)
                }
                beforeSharedCommit = nil
                follower.reached(reached)
                // A load whose answer includes this commit no longer replays its writes.
                resident.settleHistory(pending: Self.pendingVersion, at: reached)
                let committed = follower.takeDecided()
                for write in committed {
                    for delivery in write.deliveries { delivery.subscriber.send(delivery.update) }
                    write.completion?(.committed(value: write.value))
                }
            } catch {
                let outcome = (error as? any SharedCommitFailure)?.mayHaveCommitted == true
                    ? "It may have been written; the data will show it" : "Nothing was written"
                let failure = ServerError(
                    .storageFailed, "The write could not be committed to the shared store: \(SharedLog.summary(of: error)). \(outcome).",
                    underlying: error)
                if decisions.taken {
                    let failed = follower.takeDecided()
                    // The decided writes are in memory only: back to the data before them, and
                    // the listens of the locations they changed are told.
                    undoSharedDecisions(failed)
                    for write in failed { if let stamp = write.stamp { ledger.forget(stamp) } }
                    for write in failed { write.completion?(.failed(failure)) }
                } else {
                    for write in group { write.completion(.failed(failure)) }
                }
                SharedLog.logger.error("shared commit failed", metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
    }

    /// Runs under the write lock, in a turn: applies what other nodes committed, then decides
    /// each write of `group` against the result (loading what it needs). Refused writes are
    /// answered at once; the accepted ones wait in the follower for the commit.
    private func decideUnderLock(_ group: [SharedPendingWrite], missed: [SharedLogEntry]?, from shared: any SharedServerStore,
                                 taken: DecisionsTaken) async throws -> SharedCommit? {
        await startTurn()
        defer { endTurn() }
        try await catchUpNow(with: missed, from: shared)
        beforeSharedCommit = resident
        taken.taken = true
        var writes: [WriteOperation] = []
        var storeWrites: [StoreWrite] = []
        var settings: [StoreSetting] = []
        for write in group {
            switch await decide(write.operation, condition: write.condition, stamp: write.stamp, as: write.caller) {
            case .refused(let result):
                write.completion(result)
            case .accepted(var decided, let resolved):
                decided.completion = write.completion
                follower.decided(decided)
                if let resolved { writes.append(resolved) }
                storeWrites += decided.writes
                settings += decided.settings
            }
        }
        guard !writes.isEmpty || !settings.isEmpty else { return nil }
        return SharedCommit(change: writes.isEmpty ? nil : StoreChange(writes: storeWrites), writes: writes, settings: settings)
    }

    /// Takes back writes decided for a shared commit that failed: the resident data goes back to
    /// what it was before them (no store read: PostgreSQL may be down), and their locations'
    /// listens get the data again. Held locations not resident then are loaded again.
    private func undoSharedDecisions(_ failed: [DecidedWrite]) {
        guard let snapshot = beforeSharedCommit else {
            scheduleReload()
            return
        }
        beforeSharedCommit = nil
        let current = root
        let missing = resident.restore(from: snapshot)
        for path in Self.outermost(failed.flatMap(\.changedPaths)) {
            for delivery in listens.overwriteDeliveries(at: path, old: current, new: root) { delivery.subscriber.send(delivery.update) }
        }
        if !missing.isEmpty { scheduleReload() }
    }

    /// Applies committed entries, during a turn (`nil`: the log no longer reaches back to this
    /// node's place, so the held data, the ledger and the rules are read again).
    private func catchUpNow(with entries: [SharedLogEntry]?, from shared: any SharedServerStore) async throws {
        guard let entries else {
            ledger.reload(try await shared.settings(withPrefix: WriterLedger.settingPrefix))
            mustReload = true
            try await reloadIfNeeded()
            if let text = try await shared.setting(named: "rules").map({ String(decoding: $0, as: UTF8.self) }), text != storedRulesText {
                await adoptCommittedRules(text)
            }
            return
        }
        for entry in entries where entry.sequence > follower.sequence {
            for write in entry.writes { applyCommitted(write, version: entry.sequence) }
            for setting in entry.settings where setting.name.hasPrefix(WriterLedger.settingPrefix) { ledger.adopt(setting) }
            for setting in entry.settings where setting.name == "rules" {
                await adoptCommittedRules(String(decoding: setting.value, as: UTF8.self))
            }
            follower.reached(entry.sequence)
        }
    }

    /// Puts in force rules another node committed, when they compile here.
    private func adoptCommittedRules(_ text: String) async {
        do {
            await adoptRules(try RuleSet(parsing: text), source: text)
        } catch {
            SharedLog.logger.error("rules committed by another node do not compile here; keeping the rules in force",
                                   metadata: ["namespace": "\(name)", "error": "\(error)"])
        }
    }

    /// Applies a write another node committed (server values already resolved) to the resident
    /// data it touches, and sends the updates it causes at once.
    private func applyCommitted(_ operation: WriteOperation, version: UInt64) {
        let old = root
        switch operation {
        case .set(let path, let node):
            resident.apply(StoreWrite(path: path, node: node), version: version)
            for delivery in listens.overwriteDeliveries(at: path, old: old, new: root) { delivery.subscriber.send(delivery.update) }
        case .update(let path, let children):
            for child in children { resident.apply(StoreWrite(path: path.appending(child.path), node: child.node), version: version) }
            for delivery in listens.mergeDeliveries(at: path, children: children, old: old, new: root) {
                delivery.subscriber.send(delivery.update)
            }
        }
    }

    /// ``catchUpNow(with:from:)`` in a turn of its own.
    private func catchUpInTurn(with entries: [SharedLogEntry]?, from shared: any SharedServerStore) async throws {
        await startTurn()
        defer { endTurn() }
        try await catchUpNow(with: entries, from: shared)
    }

    /// Mirrors a connection's onDisconnect writes into the shared store (nothing to do when the
    /// namespace is not shared).
    ///
    /// - Throws: the store's error; the caller then keeps its earlier registrations.
    public func holdOnDisconnect(connection: String, writes: [HeldWrite]) async throws {
        guard let shared else { return }
        try await shared.holdOnDisconnect(connection: connection, writes: writes)
    }

    /// Whether a connection that ended here should run its onDisconnect writes: always when the
    /// namespace is not shared; when it is, only if no other node claimed them meanwhile. When
    /// the store cannot be asked, they run here (a dead node's claimant could then run them too).
    public func takeOnDisconnect(connection: String) async -> Bool {
        guard let shared else { return true }
        do {
            return try await shared.takeOnDisconnect(connection: connection)
        } catch {
            SharedLog.logger.warning("cannot take back onDisconnect writes from the shared store; running them here",
                                     metadata: ["namespace": "\(name)", "error": "\(error)"])
            return true
        }
    }

    /// Saves a setting as its own shared commit, so every node adopts it.
    func commitSettingExclusively(_ setting: StoreSetting, in shared: any SharedServerStore) async throws {
        let reached = try await shared.commitExclusively(after: follower.sequence) { missed in
            try await self.catchUpInTurn(with: missed, from: shared)
            return SharedCommit(change: nil, writes: [], settings: [setting])
        }
        follower.reached(reached)
    }
}

/// Whether a shared commit got as far as deciding its writes (only then are they in flight).
private final class DecisionsTaken: Sendable {
    private let state = Mutex(false)
    /// Whether the writes were decided.
    var taken: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// The shared-namespace log.
enum SharedLog {
    static let logger = Logger(label: "rtdb.shared")

    /// A short reason for a commit error.
    static func summary(of error: any Error) -> String {
        var text = "\(error)"
        while text.hasSuffix(".") { text.removeLast() }
        return text.count > 200 ? String(text.prefix(200)) + "..." : text
    }
}
