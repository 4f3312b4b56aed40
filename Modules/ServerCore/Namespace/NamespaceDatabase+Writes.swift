import CoreTree
import Persistence
import SecurityRules
public import SyncProtocol

/// Deciding writes against the resident data, and the commit pipeline.
extension NamespaceDatabase {
    /// Applies a write and calls `completion` once it is durable (or refused, or failed).
    /// Completions of durable writes come in the order the writes were submitted.
    ///
    /// A write `caller` may not make under the rules fails with `permissionDenied` and changes
    /// nothing. A write with a `stamp` the namespace already applied is answered as committed
    /// (with the data now at its path) and changes nothing; the answer still waits until the
    /// writes before it are durable.
    public func submit(_ operation: WriteOperation, condition: WriteCondition? = nil, stamp: WriteStamp? = nil, as caller: Caller,
                       completion: @escaping @Sendable (WriteResult) -> Void) {
        submit(operation, condition: condition, stamp: stamp, as: caller, dataChecked: false, completion: completion)
    }

    /// ``submit(_:condition:stamp:as:completion:)``; with `dataChecked`, the data was already
    /// checked where it goes (``CoreTree/Validation/validateWrite(_:at:)``) and only the paths are.
    func submit(_ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp?, as caller: Caller, dataChecked: Bool,
                completion: @escaping @Sendable (WriteResult) -> Void) {
        guard !isClosed else {
            completion(.failed(ServerError(.unavailable, "The namespace \(name) is closing.")))
            return
        }
        do {
            try refuseIfDamaged()
            try NamespaceDatabase.check(operation, dataChecked: dataChecked)
        } catch {
            completion(.failed(error))
            return
        }
        if shared != nil {
            follower.enqueue(SharedPendingWrite(operation: operation, condition: condition, stamp: stamp, caller: caller, completion: completion))
            startCommitting()
            return
        }
        // The turn is taken now, so the write's place in the order is the order of submission.
        let ticket = turns.take()
        if turns.isServing(ticket), !mustReload, case .decided(let decision) = attempt(operation, condition: condition, stamp: stamp, as: caller) {
            conclude(decision, completion: completion)
            endTurn()
            return
        }
        Task { await self.decideInTurn(ticket, operation, condition: condition, stamp: stamp, as: caller, completion: completion) }
    }

    /// Applies a write and waits until it is durable (or refused, or failed).
    public func write(_ operation: WriteOperation, condition: WriteCondition? = nil, stamp: WriteStamp? = nil, as caller: Caller) async -> WriteResult {
        await withCheckedContinuation { continuation in
            submit(operation, condition: condition, stamp: stamp, as: caller) { continuation.resume(returning: $0) }
        }
    }

    /// ``write(_:condition:stamp:as:)`` for a write whose data the caller already checked where
    /// it goes, as ``CoreTree/Validation/validateWrite(_:at:)`` does (a REST body's
    /// ``CoreTree/JSONStreamReader`` given the write's location checks each piece as it arrives):
    /// only its paths are checked again, not its data a second time.
    package func write(dataChecked operation: WriteOperation, condition: WriteCondition? = nil, as caller: Caller) async -> WriteResult {
        await withCheckedContinuation { continuation in
            submit(operation, condition: condition, stamp: nil, as: caller, dataChecked: true) { continuation.resume(returning: $0) }
        }
    }

    /// Decides a write that had to wait for its turn or load data first.
    private func decideInTurn(_ ticket: UInt64, _ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp?, as caller: Caller,
                              completion: @escaping @Sendable (WriteResult) -> Void) async {
        if !turns.isServing(ticket) { await withCheckedContinuation { turns.wait(ticket, $0) } }
        defer { endTurn() }
        conclude(await decide(operation, condition: condition, stamp: stamp, as: caller), completion: completion)
    }

    /// Answers a refused write, or queues an accepted one for its commit.
    private func conclude(_ decision: Decision, completion: @escaping @Sendable (WriteResult) -> Void) {
        switch decision {
        case .refused(let result):
            completion(result)
        case .accepted(let decided, _):
            pipeline.enqueue(CommitPipeline.PendingWrite(
                deliveries: decided.deliveries, writes: decided.writes, settings: decided.settings, version: decided.version,
                stamp: decided.stamp, value: decided.value, completion: completion))
            startCommitting()
        }
    }

    /// A write decided against the resident data and applied to it.
    struct DecidedWrite {
        var deliveries: [Delivery]
        /// What it wrote, server values resolved, in order.
        var writes: [StoreWrite]
        var changedPaths: [TreePath] { writes.map(\.path) }
        /// Settings to commit with it (its client's ledger record).
        var settings: [StoreSetting]
        /// The version its writes were applied at.
        var version: UInt64
        /// Its stamp when it was applied now (taken back from the ledger if its commit fails).
        var stamp: WriteStamp?
        /// The data at the write's path afterwards (for a merge, at its children's paths): what
        /// its acknowledgement reports.
        var value: Node
        var completion: (@Sendable (WriteResult) -> Void)?
    }

    enum Decision {
        /// Not applied: the result to report (refused by the rules, invalid, stale).
        case refused(WriteResult)
        /// Applied to the resident data; `resolved` is the write with its server values resolved
        /// (`nil` for a repeated stamped write, which changes nothing).
        case accepted(DecidedWrite, resolved: WriteOperation?)
    }

    /// An attempt to decide a write on the data in memory.
    enum Attempt {
        /// Decided (and, when accepted, applied).
        case decided(Decision)
        /// These locations must be loaded first; nothing changed.
        case needs([TreePath])
    }

    /// The version writes decided under a shared store's lock are applied at until their commit's
    /// sequence is known (a load replays them whatever its version).
    static let pendingVersion = UInt64.max

    /// Decides `operation` during a turn, loading what it needs until it can.
    func decide(_ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp? = nil, as caller: Caller) async -> Decision {
        for _ in 0..<Self.maxRuleLoadRounds {
            do {
                try await reloadIfNeeded()
                switch attempt(operation, condition: condition, stamp: stamp, as: caller) {
                case .decided(let decision): return decision
                case .needs(let paths): try await makeResident(paths)
                }
            } catch {
                return .refused(.failed(error))
            }
        }
        metrics?.denied("write")
        return .refused(.failed(ServerError(.permissionDenied, "Permission denied: the rules read more data than they may load.")))
    }

    /// Judges `operation` against the resident data (server values, rules, the compare-and-set
    /// hash) and, when it may be made, applies it and computes the updates it causes; or says
    /// what must be loaded first. A write whose stamp was applied before is accepted with no
    /// change (it is answered once the writes before it are durable).
    func attempt(_ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp?, as caller: Caller) -> Attempt {
        let serverTime = clock()
        if let stamp, ledger.isDuplicate(stamp) {
            let missing = operation.writtenLocations.filter { !resident.isResident($0) }
            if !missing.isEmpty { return .needs(missing) }
            let unchanged = DecidedWrite(deliveries: [], writes: [], settings: [], version: lastVersion, stamp: nil,
                                         value: acknowledgedValue(of: operation), completion: nil)
            return .decided(.accepted(unchanged, resolved: nil))
        }
        let serverValues = Self.serverValueLocations(of: operation)
        var needed = serverValues.needingData
        if condition != nil { needed.append(operation.path) }
        let missing = needed.filter { !resident.isResident($0) }
        if !missing.isEmpty { return .needs(missing) }
        let writes: [StoreWrite]
        do {
            writes = try resolve(operation, hasServerValues: !serverValues.all.isEmpty, serverTime: serverTime)
        } catch {
            return .decided(.refused(.failed(error)))
        }
        // The rules before the hash: a stale answer would tell a caller who may not write what is there.
        if case .user(let auth) = caller {
            let judged = judge(writes, auth: auth, now: serverTime)
            if !judged.missing.isEmpty { return .needs(judged.missing) }
            guard judged.allowed else {
                metrics?.denied("write")
                return .decided(.refused(.failed(ServerError(.permissionDenied, "Permission denied"))))
            }
        }
        if case .hash(let expected)? = condition {
            let current = root.child(at: operation.path)
            if current.hash != expected { return .decided(.refused(.stale(current: current))) }
        }
        return .decided(apply(operation, writes: writes, stamp: stamp, serverTime: serverTime))
    }

    /// Applies a decided write's resolved `writes` to the resident data and computes the updates
    /// listeners get.
    private func apply(_ operation: WriteOperation, writes: [StoreWrite], stamp: WriteStamp?, serverTime: Int64) -> Decision {
        let old = root
        let version: UInt64
        if shared != nil {
            version = Self.pendingVersion
        } else {
            lastVersion += 1
            version = lastVersion
        }
        for write in writes {
            resident.apply(write, version: version)
            // A write is the whole data at its path: recently written data stays in memory (least
            // recently used first out), as recently read data does.
            if !resident.isResident(write.path) { resident.insert(StoredData(node: write.node, version: version), at: write.path) }
        }
        let resolvedOperation: WriteOperation
        let deliveries: [Delivery]
        switch operation {
        case .set(let path, _):
            resolvedOperation = .set(path: path, node: writes[0].node)
            deliveries = listens.overwriteDeliveries(at: path, old: old, new: root)
        case .update(let path, _):
            let children = writes.map { (path: $0.path.relative(to: path)!, node: $0.node) }
            resolvedOperation = .update(path: path, children: children)
            deliveries = listens.mergeDeliveries(at: path, children: children, old: old, new: root)
        }
        var settings = ledgerRemovals
        ledgerRemovals = []
        if let stamp {
            settings.append(ledger.noteApplied(stamp, now: serverTime))
            settings += ledger.sweep(now: serverTime)
        }
        let value = Self.value(of: resolvedOperation)
        let decided = DecidedWrite(deliveries: deliveries, writes: writes, settings: settings, version: version, stamp: stamp,
                                   value: value, completion: nil)
        return .accepted(decided, resolved: resolvedOperation)
    }

    /// What a write's acknowledgement reports: for a set the data written, for a merge its
    /// children at their paths.
    private static func value(of resolved: WriteOperation) -> Node {
        switch resolved {
        case .set(_, let node): return node
        case .update(_, let children): return children.reduce(Node.empty) { $0.updatingChild(at: $1.path, to: $1.node) }
        }
    }

    /// The data now at a write's locations, shaped like ``value(of:)`` (for a repeated write).
    private func acknowledgedValue(of operation: WriteOperation) -> Node {
        switch operation {
        case .set(let path, _): return root.child(at: path)
        case .update(let path, let children):
            return children.reduce(Node.empty) { $0.updatingChild(at: $1.path, to: root.child(at: path.appending($1.path))) }
        }
    }

    /// The rules' answer for `writes` made by `auth`, judged on the resident data, and the
    /// locations they read that are not resident (the answer counts only when there are none).
    private func judge(_ writes: [StoreWrite], auth: Node?, now: Int64) -> (allowed: Bool, missing: [TreePath]) {
        let before = root
        let after = writes.reduce(before) { $0.updatingChild(at: $1.path, to: $1.node) }
        let access = RuleDataAccess()
        let allowed = rules.canWrite(writes.map(\.path), before: before, after: after, auth: auth, now: Double(now), access: access)
        var missing = Array(access.before.filter { !resident.isResident($0) })
        // New data inside a written location is the write's own; elsewhere it is the data before.
        missing += access.after.filter { location in
            !writes.contains { $0.path.contains(location) } && !resident.isResident(location)
        }
        return (allowed, missing)
    }

    /// Resolves `operation`'s server values against the resident data at `serverTime`: the
    /// writes it makes, in order, with absolute paths.
    ///
    /// - Throws: ``ServerError`` `invalidArgument` when a server value cannot resolve (an
    ///   increment that would overflow).
    private func resolve(_ operation: WriteOperation, hasServerValues: Bool, serverTime: Int64) throws(ServerError) -> [StoreWrite] {
        func resolved(_ node: Node, at location: TreePath) throws(ServerError) -> Node {
            guard hasServerValues else { return node }
            do {
                return try ServerValue.resolve(node, existing: root.child(at: location), serverTime: serverTime, at: location)
            } catch {
                throw ServerError(.invalidArgument, error.message)
            }
        }
        switch operation {
        case .set(let path, let node):
            return [StoreWrite(path: path, node: try resolved(node, at: path))]
        case .update(let path, let children):
            var writes: [StoreWrite] = []
            for child in children {
                let location = path.appending(child.path)
                writes.append(StoreWrite(path: location, node: try resolved(child.node, at: location)))
            }
            return writes
        }
    }

    /// Where a write holds server values: every one (`all`), and those that need the data
    /// already there (increments, placeholder priorities: `needingData`).
    static func serverValueLocations(of operation: WriteOperation) -> (all: [TreePath], needingData: [TreePath]) {
        switch operation {
        case .set(let path, let node):
            return serverValueLocations(in: node, at: path)
        case .update(let path, let children):
            var found: (all: [TreePath], needingData: [TreePath]) = ([], [])
            for child in children {
                let inChild = serverValueLocations(in: child.node, at: path.appending(child.path))
                found.all += inChild.all
                found.needingData += inChild.needingData
            }
            return found
        }
    }

    /// ``serverValueLocations(of:)`` for `node` written at `path`, in one walk of it.
    static func serverValueLocations(in node: Node, at path: TreePath) -> (all: [TreePath], needingData: [TreePath]) {
        var found: (all: [TreePath], needingData: [TreePath]) = ([], [])
        var keys = path.keys
        func walk(_ node: Node) {
            if node.isLeaf || node.isEmpty { return }
            if ServerValue.isPlaceholder(node) {
                let location = TreePath(keys: keys)
                found.all.append(location)
                if !node.immediateChild(.serverValue).immediateChild("increment").isEmpty { found.needingData.append(location) }
                return
            }
            if ServerValue.placeholderPriority(of: node) != nil {
                let location = TreePath(keys: keys)
                found.all.append(location)
                found.needingData.append(location)
                return
            }
            for (key, child) in node.children {
                keys.append(key)
                walk(child)
                keys.removeLast()
            }
        }
        walk(node)
        return found
    }

    /// Whether the rules would let `caller` make `operation` now (without making it): the check
    /// an onDisconnect write gets when it is registered. Data the rules read is loaded first; when
    /// it cannot be, the answer is no.
    public func mayWrite(_ operation: WriteOperation, as caller: Caller) async -> Bool {
        guard case .user(let auth) = caller else { return true }
        await startTurn()
        defer { endTurn() }
        for _ in 0..<Self.maxRuleLoadRounds {
            do {
                try await reloadIfNeeded()
                let serverValues = Self.serverValueLocations(of: operation)
                let missing = serverValues.needingData.filter { !resident.isResident($0) }
                if !missing.isEmpty {
                    try await makeResident(missing)
                    continue
                }
                let serverTime = clock()
                // A server value that cannot resolve against today's data (an increment that would
                // overflow) is not a question for the rules; the write is judged again when it runs.
                guard let writes = try? resolve(operation, hasServerValues: !serverValues.all.isEmpty, serverTime: serverTime) else { return true }
                let judged = judge(writes, auth: auth, now: serverTime)
                if judged.missing.isEmpty { return judged.allowed }
                try await makeResident(judged.missing)
            } catch {
                return false
            }
        }
        return false
    }

    /// Checks a write without applying it: the path may be written and the data is valid.
    public static func check(_ operation: WriteOperation) throws(ServerError) {
        try check(operation, dataChecked: false)
    }

    /// ``check(_:)``; with `dataChecked`, the paths only (the data was checked where it goes).
    static func check(_ operation: WriteOperation, dataChecked: Bool) throws(ServerError) {
        if operation.path.firstKey == .info {
            throw ServerError(.notAllowed, "\(operation.path.wireForm) is read-only: .info is kept by each client.")
        }
        do {
            switch operation {
            case .set(let path, let node):
                try Validation.validateWrite(dataChecked ? .empty : node, at: path)
            case .update(let path, let children):
                if dataChecked {
                    try Validation.validateUpdatePaths(children.map(\.path), at: path)
                } else {
                    try Validation.validateUpdate(children, at: path)
                }
            }
        } catch {
            throw ServerError(.invalidArgument, error.message)
        }
    }

    // MARK: - Commit pipeline

    func startCommitting() {
        guard pipeline.beginRun(hasWork: pipeline.hasPending || follower.hasWork) else { return }
        Task { await self.runCommits() }
    }

    private func runCommits() async {
        if let shared { await runSharedCommits(shared) }
        while pipeline.hasPending {
            let group = pipeline.takeGroup()
            let version = group.last?.version ?? pipeline.durableVersion
            let change = StoreChange(writes: group.flatMap(\.writes), settings: group.flatMap(\.settings), version: version)
            let failure = change.writes.isEmpty && change.settings.isEmpty ? nil : await commitOffActor(change)
            finish(group, version: version, failure: failure)
        }
        for waiter in pipeline.endRun() { waiter.resume() }
    }

    /// Commits `change` to the store (which does the work on its own thread); the error, if any.
    private func commitOffActor(_ change: StoreChange) async -> (any Error)? {
        do {
            let start = ContinuousClock.now
            try await store.commit(change)
            metrics?.storeCommitted(in: start.duration(to: .now))
            return nil
        } catch {
            return error
        }
    }

    /// Ends a group whose last write has `version`: durable, or undone with every write after it
    /// (the resident data is loaded again from the store, which has exactly the durable data).
    private func finish(_ group: [CommitPipeline.PendingWrite], version: UInt64, failure: (any Error)?) {
        guard let failure else {
            pipeline.committed(through: version)
            for write in group {
                for delivery in write.deliveries { delivery.subscriber.send(delivery.update) }
                write.completion(.committed(value: write.value))
            }
            return
        }
        let failed = pipeline.failed(group)
        scheduleReload()
        for write in failed { if let stamp = write.stamp { ledger.forget(stamp) } }
        let error = storeFailure(failure, foundBy: "a commit") {
            let reason = (failure as? StorageError)?.summary ?? "the storage failed"
            return ServerError(.storageFailed, "The write could not be stored: \(reason). Nothing was written.", underlying: failure)
        }
        for write in failed { write.completion(.failed(error)) }
    }
}

extension WriteOperation {
    /// The locations the write replaces: its path for a set, each child's for a merge.
    var writtenLocations: [TreePath] {
        switch self {
        case .set(let path, _): [path]
        case .update(let path, let children): children.map { path.appending($0.path) }
        }
    }
}
