import CoreTree
import Logging
import QueryEngine
import SecurityRules

/// Turns, and what an operation loads into memory during its turn.
extension NamespaceDatabase {
    // MARK: - Turns

    /// Waits for the caller's turn (at once when nobody has or waits for one). Every path into the
    /// resident data runs between this and ``endTurn()``.
    func startTurn() async {
        let ticket = turns.take()
        if !turns.isServing(ticket) { await withCheckedContinuation { turns.wait(ticket, $0) } }
        // Commits may have become durable since the last turn ended.
        resident.trimHistory(through: shared == nil ? pipeline.durableVersion : follower.sequence)
    }

    /// Ends the caller's turn: forgets the writes no load needs any more, keeps the resident data
    /// within the budget, reports the cache's use, and lets the next operation in.
    func endTurn() {
        resident.trimHistory(through: shared == nil ? pipeline.durableVersion : follower.sequence)
        let evicted = resident.evict(downTo: budget.share(of: name))
        reportCache(heldChanged: !evicted.isEmpty)
        if let next = turns.finish() { next.resume() }
    }

    /// Reports the cache's use to the budget and the lookups to the metrics (the held bytes only
    /// when `heldChanged`: they cost a walk over the entries).
    func reportCache(heldChanged: Bool) {
        var usage = CacheBudget.Usage(bytes: resident.bytes, heldBytes: lastHeldBytes, entries: resident.entryCount)
        if heldChanged {
            usage.heldBytes = resident.heldBytes
            lastHeldBytes = usage.heldBytes
        }
        budget.report(name, usage)
        if lookups.hits > 0 || lookups.misses > 0 {
            metrics?.cacheLookups(hits: lookups.hits, misses: lookups.misses)
            lookups = (0, 0)
        }
    }

    // MARK: - Loading

    /// Makes the data at each of `paths` resident (during a turn), reading from the store what is
    /// not; each read is bounded by Firebase's 256 MB per answer.
    ///
    /// - Throws: ``ServerError`` `tooBig` when a location's data exceeds that, `storageFailed`
    ///   when the store cannot be read.
    func makeResident(_ paths: some Sequence<TreePath>) async throws(ServerError) {
        try await reloadIfNeeded()
        for path in Self.outermost(paths) {
            if resident.read(path) != nil {
                lookups.hits += 1
                continue
            }
            lookups.misses += 1
            let stored: StoredData
            do {
                stored = try await store.read(at: path, limit: ServerError.maxReadBytes)
            } catch {
                throw readFailure(error)
            }
            resident.insert(stored, at: path)
        }
    }

    /// Reads the held data again after writes were undone (a failed commit): the store holds
    /// exactly what is durable. Listeners of the held locations are told what changed.
    func reloadIfNeeded() async throws(ServerError) {
        guard mustReload else { return }
        let before = root
        let held = resident.outermostHeldPaths
        resident.dropAll()
        do {
            // A shared namespace then follows the log from where the store is before these reads:
            // entries it applies again that a read already saw change nothing, since each sets
            // its paths and they come in order.
            let start = try await store.read(at: NamespaceDatabase.versionProbe, limit: 1024).version
            for path in held { resident.insert(try await store.read(at: path, limit: .max), at: path) }
            if shared != nil { follower.reached(max(start, follower.sequence)) }
        } catch {
            // The held locations stay unloaded; the next turn tries again.
            throw readFailure(error)
        }
        mustReload = false
        for path in held {
            for delivery in listens.overwriteDeliveries(at: path, old: before, new: root) { delivery.subscriber.send(delivery.update) }
        }
        lastHeldBytes = resident.heldBytes
    }

    /// Marks the resident data out of date (writes were undone) and loads it again in a turn of
    /// its own, so listeners learn at once even when no operation comes.
    func scheduleReload() {
        mustReload = true
        Task {
            await self.startTurn()
            defer { self.endTurn() }
            do throws(ServerError) {
                try await self.reloadIfNeeded()
            } catch {
                Logger(label: "rtdb.namespace").error(
                    "cannot load the held data again after a failed commit", metadata: ["namespace": "\(self.name)", "error": "\(error)"])
            }
        }
    }

    /// The paths of `paths` that no other of them contains, without repeats.
    static func outermost(_ paths: some Sequence<TreePath>) -> [TreePath] {
        var result: [TreePath] = []
        for path in paths.sorted(by: { $0.depth < $1.depth }) where !result.contains(where: { $0.contains(path) }) {
            result.append(path)
        }
        return result
    }

    /// The error an operation gets when the store could not be read (the namespace's damage
    /// error when the read found damage).
    nonisolated func readFailure(_ error: any Error) -> ServerError {
        if let error = error as? ServerError { return error }
        return storeFailure(error, foundBy: "a read") {
            ServerError(.storageFailed, "The data could not be read from storage.", underlying: error)
        }
    }

    // MARK: - Rules that read data

    /// Loads, during a turn, what the rules read when judging each of `reads` (path, query,
    /// caller), until nothing they read is missing: afterwards the rules can be evaluated on the
    /// resident data with the right answer.
    func loadWhatRulesRead(_ reads: [(TreePath, QueryParams, Caller)]) async throws(ServerError) {
        try await reloadIfNeeded()
        for _ in 0..<Self.maxRuleLoadRounds {
            var missing: Set<TreePath> = []
            for (path, params, caller) in reads {
                guard case .user(let auth) = caller, path.firstKey != ChildKey.info else { continue }
                let access = RuleDataAccess()
                _ = rules.canRead(path, root: root, auth: auth, now: Double(clock()), query: RuleQuery(params), access: access)
                missing.formUnion(access.before.filter { !resident.isResident($0) })
            }
            if missing.isEmpty { return }
            try await makeResident(missing)
        }
    }

    /// How often an evaluation may find data missing and load it before it gives up: rules whose
    /// reads depend on the data read before (`root.child(data.val())`) take a round per step.
    static let maxRuleLoadRounds = 32
}
