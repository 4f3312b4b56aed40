public import CoreTree
import Foundation
public import QueryEngine
import Persistence
public import SecurityRules
public import SyncProtocol

/// One namespace's database: the whole tree in memory, its listeners, and the pipeline that makes
/// writes durable before they are acknowledged.
///
/// A write is validated, its server values are resolved against the current data and the server
/// clock, and it is applied in memory at once, so later requests see it. Its acknowledgement and
/// the updates it causes for listeners wait until its group of writes is durable: while one group
/// is being synced, new writes gather into the next (group commit). If a sync fails, that group
/// and every write after it fail, and the tree returns to its last durable state.
///
/// Reads and new listens see writes that are applied but not yet durable.
public actor NamespaceDatabase {
    /// The namespace's name.
    public nonisolated let name: String
    let store: any ServerStore
    let clock: @Sendable () -> Int64
    /// Where commits and rule denials are counted (the server's metrics), if anywhere.
    private let metrics: (any NamespaceMetrics)?
    var root: Node
    /// Writes applied in memory and not yet durable, grouped for the store.
    var pipeline: CommitPipeline
    /// The tree as the last successful commit left it.
    var durableRoot: Node { pipeline.durableRoot }
    /// Every listen, with who holds it.
    private var listens = ListenRegistry()
    private var isClosed = false
    private var pushIDs = PushIDGenerator()
    /// The security rules every non-admin request is judged by.
    var rules: RuleSet
    /// The rules document as stored (`nil` when none is).
    public internal(set) var storedRulesText: String?
    /// The store when several nodes share the namespace; writes are then decided under its lock.
    let shared: (any SharedServerStore)?
    /// For a shared namespace: its place in the change log and the writes waiting to commit there.
    var follower: SharedLogFollower<SharedPendingWrite, DecidedWrite>
    /// The stamped writes applied per client, so each is applied at most once.
    var ledger: WriterLedger
    /// Ledger records to remove with the next commit (expired when the namespace opened).
    var ledgerRemovals: [StoreSetting] = []
    /// Why the stored rules could not be used when the namespace opened (it then denies everyone
    /// but administrators until new rules are installed).
    public nonisolated let rulesProblemAtOpen: RulesError?

    /// Opens the namespace over `store`, loading its tree.
    ///
    /// - Parameters:
    ///   - clock: the server time in milliseconds since the Unix epoch.
    ///   - defaultRules: the rules document to install when the namespace has none stored; without
    ///     it, a namespace with no stored rules is open to everyone (the server allows that only
    ///     when it listens on loopback addresses alone).
    ///   - writerRetention: how long the namespace remembers a client's stamped writes after its
    ///     last one (see ``SyncProtocol/WriteStamp``).
    /// - Throws: the store's errors, or ``RulesError`` when `defaultRules` does not compile.
    public static func open(name: String, store: any ServerStore, clock: @escaping @Sendable () -> Int64 = NamespaceDatabase.systemClock,
                            defaultRules: String? = nil,
                            writerRetention: Duration = NamespaceDatabase.defaultWriterRetention) async throws -> NamespaceDatabase {
        try await open(name: name, store: store, clock: clock, defaultRules: defaultRules, writerRetention: writerRetention, metrics: nil)
    }

    /// Opens a namespace that counts its commits and rule denials in `metrics`.
    package static func open(name: String, store: any ServerStore, clock: @escaping @Sendable () -> Int64 = NamespaceDatabase.systemClock,
                             defaultRules: String? = nil, writerRetention: Duration = NamespaceDatabase.defaultWriterRetention,
                             metrics: (any NamespaceMetrics)?) async throws -> NamespaceDatabase {
        var ledger = WriterLedger(retention: writerRetention.components.seconds * 1000)
        ledger.reload(try await store.settings(withPrefix: WriterLedger.settingPrefix))
        let shared = store as? any SharedServerStore
        let root: Node
        let sequence: UInt64
        if let shared {
            (root, sequence) = try await shared.loadWithSequence()
        } else {
            (root, sequence) = (try await store.load(), 0)
        }
        var rules: RuleSet
        var problem: RulesError?
        var rulesText = try await store.setting(named: "rules").map { String(decoding: $0, as: UTF8.self) }
        if let stored = rulesText {
            do {
                rules = try RuleSet(parsing: stored)
            } catch {
                rules = .everywhere(read: false, write: false)
                problem = error
            }
        } else if let defaultRules {
            rules = try RuleSet(parsing: defaultRules)
            try await store.saveSetting(named: "rules", Array(defaultRules.utf8))
            rulesText = defaultRules
        } else {
            rules = .everywhere(read: true, write: true)
        }
        let database = NamespaceDatabase(
            name: name, store: store, shared: shared, clock: clock, metrics: metrics, root: root, sequence: sequence,
            ledger: ledger, rules: rules, rulesText: rulesText, rulesProblem: problem)
        await database.followOtherNodes()
        return database
    }

    private init(name: String, store: any ServerStore, shared: (any SharedServerStore)?, clock: @escaping @Sendable () -> Int64,
                 metrics: (any NamespaceMetrics)?, root: Node, sequence: UInt64, ledger: WriterLedger, rules: RuleSet,
                 rulesText: String?, rulesProblem: RulesError?) {
        self.metrics = metrics
        self.name = name
        self.store = store
        self.shared = shared
        self.clock = clock
        self.ledger = ledger
        ledgerRemovals = self.ledger.sweep(now: clock(), force: true)
        self.root = root
        pipeline = CommitPipeline(durableRoot: root)
        follower = SharedLogFollower(at: sequence)
        self.rules = rules
        storedRulesText = rulesText
        rulesProblemAtOpen = rulesProblem
    }

    /// For a shared namespace: catches up whenever another node may have committed.
    private func followOtherNodes() {
        shared?.onChange { [weak self] in
            guard let self else { return }
            Task { await self.catchUp() }
        }
    }

    /// How long a namespace remembers a client's stamped writes by default: 30 days after its last.
    public static let defaultWriterRetention: Duration = .seconds(30 * 24 * 3600)

    /// Milliseconds since the Unix epoch from the system clock.
    public static let systemClock: @Sendable () -> Int64 = { ServerClock.system.milliseconds() }

    /// The server's current time in milliseconds.
    public nonisolated func now() -> Int64 { clock() }

    // MARK: - Reads and listens

    /// The data at `path`, filtered by `params`.
    ///
    /// - Throws: ``ServerError`` `permissionDenied` when the rules do not let `caller` read it.
    public func read(_ path: TreePath, params: QueryParams = .default, as caller: Caller) throws(ServerError) -> Node {
        try authorizeRead(path, params: params, as: caller)
        return params.filtered(root.child(at: path))
    }

    /// Throws `permissionDenied` unless `caller` may read `path` with `params`.
    public func authorizeRead(_ path: TreePath, params: QueryParams, as caller: Caller) throws(ServerError) {
        guard mayRead(path, params: params, as: caller) else {
            metrics?.denied("read")
            throw ServerError(.permissionDenied, "Permission denied")
        }
    }

    private func mayRead(_ path: TreePath, params: QueryParams, as caller: Caller) -> Bool {
        guard case .user(let auth) = caller else { return true }
        if path.firstKey == .info { return true }
        return rules.canRead(path, root: root, auth: auth, now: Double(clock()), query: RuleQuery(params))
    }

    /// Starts a listen and sends its first update (the current data, filtered) to `subscriber`,
    /// unless `knownHash` shows the subscriber already has exactly that data.
    ///
    /// - Returns: the current data the listen selects.
    /// - Throws: ``ServerError`` `permissionDenied` when the rules do not let `caller` read it;
    ///   nothing is registered then.
    @discardableResult
    public func listen(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?,
                       knownHash: String? = nil, as caller: Caller) throws(ServerError) -> Node {
        try authorizeRead(path, params: params, as: caller)
        let data = listens.add(subscriber, path: path, params: params, tag: tag, caller: caller) { [root] in root.child(at: $0) }
        if let knownHash, !knownHash.isEmpty, knownHash == data.hash { return data }
        subscriber.send(ListenUpdate(listenPath: path, tag: tag, path: path,
                                     payload: EncodedPayload(.overwrite(data)), isInitial: true))
        return data
    }

    /// Stops a listen; returns whether it existed.
    @discardableResult
    public func unlisten(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?) -> Bool {
        listens.remove(subscriber, path: path, params: params, tag: tag)
    }

    /// The number of listens (for tests and statistics).
    public var listenCount: Int { listens.count }

    // MARK: - Writes

    /// Applies a write and calls `completion` once it is durable (or refused, or failed).
    /// Completions of durable writes come in the order the writes were submitted.
    ///
    /// A write `caller` may not make under the rules fails with `permissionDenied` and changes
    /// nothing. A write with a `stamp` the namespace already applied is answered as committed
    /// (with the data now at its path) and changes nothing; the answer still waits until the
    /// writes before it are durable.
    public func submit(_ operation: WriteOperation, condition: WriteCondition? = nil, stamp: WriteStamp? = nil, as caller: Caller,
                       completion: @escaping @Sendable (WriteResult) -> Void) {
        guard !isClosed else {
            completion(.failed(ServerError(.unavailable, "The namespace \(name) is closing.")))
            return
        }
        do {
            try validate(operation)
        } catch {
            completion(.failed(error))
            return
        }
        if shared != nil {
            follower.enqueue(SharedPendingWrite(operation: operation, condition: condition, stamp: stamp, caller: caller, completion: completion))
            startCommitting()
            return
        }
        switch decide(operation, condition: condition, stamp: stamp, as: caller) {
        case .refused(let result):
            completion(result)
        case .accepted(let decided, _):
            pipeline.enqueue(CommitPipeline.PendingWrite(
                deliveries: decided.deliveries, writes: decided.writes, settings: decided.settings, stamp: decided.stamp,
                value: decided.value, completion: completion))
            startCommitting()
        }
    }

    /// A write decided against the tree in memory and applied to it.
    struct DecidedWrite {
        var deliveries: [Delivery]
        /// What it wrote, server values resolved, in order.
        var writes: [StoreWrite]
        var changedPaths: [TreePath] { writes.map(\.path) }
        /// Settings to commit with it (its client's ledger record).
        var settings: [StoreSetting]
        /// Its stamp when it was applied now (taken back from the ledger if its commit fails).
        var stamp: WriteStamp?
        /// The data at the write's path afterwards (what its acknowledgement reports).
        var value: Node
        var completion: (@Sendable (WriteResult) -> Void)?
    }

    enum Decision {
        /// Not applied: the result to report (refused by the rules, invalid, stale).
        case refused(WriteResult)
        /// Applied to the tree in memory; `resolved` is the write with its server values resolved.
        /// (`nil` for a repeated stamped write, which changes nothing).
        case accepted(DecidedWrite, resolved: WriteOperation?)
    }

    /// Judges `operation` against the tree in memory (server values, rules, the compare-and-set
    /// hash) and, when it may be made, applies it and computes the updates it causes. A write
    /// whose stamp was applied before is accepted with no change (it is answered once the writes
    /// before it are durable).
    func decide(_ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp? = nil, as caller: Caller) -> Decision {
        let serverTime = clock()
        let old = root
        if let stamp, ledger.isDuplicate(stamp) {
            let unchanged = DecidedWrite(deliveries: [], writes: [], settings: [], stamp: nil, value: root.child(at: operation.path), completion: nil)
            return .accepted(unchanged, resolved: nil)
        }
        let resolved: ResolvedWrite
        do {
            resolved = try resolve(operation, on: old, serverTime: serverTime)
        } catch {
            return .refused(.failed(error))
        }
        // The rules before the hash: a stale answer would tell a caller who may not write what is there.
        guard allows(resolved, before: old, as: caller, now: serverTime) else {
            metrics?.denied("write")
            return .refused(.failed(ServerError(.permissionDenied, "Permission denied")))
        }
        if case .hash(let expected)? = condition {
            let current = old.child(at: operation.path)
            if current.hash != expected { return .refused(.stale(current: current)) }
        }
        root = resolved.after
        let resolvedOperation: WriteOperation
        let deliveries: [Delivery]
        let writes: [StoreWrite]
        switch operation {
        case .set(let path, _):
            let node = root.child(at: path)
            resolvedOperation = .set(path: path, node: node)
            writes = [StoreWrite(path: path, node: node)]
            deliveries = overwriteDeliveries(at: path, old: old)
        case .update(let path, _):
            resolvedOperation = .update(path: path, children: resolved.children)
            writes = resolved.children.map { StoreWrite(path: path.appending($0.path), node: $0.node) }
            deliveries = mergeDeliveries(at: path, children: resolved.children, old: old)
        }
        var settings = ledgerRemovals
        ledgerRemovals = []
        if let stamp {
            settings.append(ledger.noteApplied(stamp, now: serverTime))
            settings += ledger.sweep(now: serverTime)
        }
        let decided = DecidedWrite(deliveries: deliveries, writes: writes, settings: settings, stamp: stamp,
                                   value: root.child(at: operation.path), completion: nil)
        return .accepted(decided, resolved: resolvedOperation)
    }

    /// Applies a write another node committed (server values already resolved) and sends the
    /// updates it causes at once.
    func applyCommitted(_ operation: WriteOperation) {
        let old = root
        switch operation {
        case .set(let path, let node):
            root = root.updatingChild(at: path, to: node)
            for delivery in overwriteDeliveries(at: path, old: old) { delivery.subscriber.send(delivery.update) }
        case .update(let path, let children):
            for child in children { root = root.updatingChild(at: path.appending(child.path), to: child.node) }
            for delivery in mergeDeliveries(at: path, children: children, old: old) { delivery.subscriber.send(delivery.update) }
        }
    }

    /// Replaces the whole tree (a node that fell behind a trimmed log reloads it) and tells every
    /// listener.
    func replaceTree(with tree: Node) {
        let old = root
        root = tree
        for delivery in overwriteDeliveries(at: .root, old: old) { delivery.subscriber.send(delivery.update) }
    }

    /// Returns the tree to `base` after writes applied on top of it failed to commit, telling the
    /// listens of the restored locations (their views moved with the failed writes).
    func restore(to base: Node, changedPaths: [TreePath]) {
        let current = root
        root = base
        var restored: [TreePath] = []
        for path in changedPaths where !restored.contains(where: { $0.contains(path) }) {
            restored.removeAll { path.contains($0) }
            restored.append(path)
        }
        for path in restored {
            for delivery in overwriteDeliveries(at: path, old: current) { delivery.subscriber.send(delivery.update) }
        }
    }

    /// Applies a write and waits until it is durable (or refused, or failed).
    public func write(_ operation: WriteOperation, condition: WriteCondition? = nil, stamp: WriteStamp? = nil, as caller: Caller) async -> WriteResult {
        await withCheckedContinuation { continuation in
            submit(operation, condition: condition, stamp: stamp, as: caller) { continuation.resume(returning: $0) }
        }
    }

    /// A write with its server values resolved against the data it applies to.
    private struct ResolvedWrite {
        /// The whole tree after the write.
        var after: Node
        /// The locations it changes.
        var changed: [TreePath]
        /// For a merge, its children (paths relative to the merge) as resolved.
        var children: [(path: TreePath, node: Node)]
    }

    /// Resolves `operation`'s server values against `base` at `serverTime` and applies it to `base`.
    ///
    /// - Throws: ``ServerError`` `invalidArgument` when a server value cannot resolve (an
    ///   increment that would overflow).
    private func resolve(_ operation: WriteOperation, on base: Node, serverTime: Int64) throws(ServerError) -> ResolvedWrite {
        do {
            switch operation {
            case .set(let path, let node):
                let resolved = try ServerValue.resolve(node, existing: base.child(at: path), serverTime: serverTime, at: path)
                return ResolvedWrite(after: base.updatingChild(at: path, to: resolved), changed: [path], children: [])
            case .update(let path, let children):
                var write = ResolvedWrite(after: base, changed: [], children: [])
                for child in children {
                    let location = path.appending(child.path)
                    let resolved = try ServerValue.resolve(child.node, existing: base.child(at: location), serverTime: serverTime, at: location)
                    write.children.append((child.path, resolved))
                    write.changed.append(location)
                    write.after = write.after.updatingChild(at: location, to: resolved)
                }
                return write
            }
        } catch {
            throw ServerError(.invalidArgument, error.message)
        }
    }

    /// Whether the rules let `caller` make `write`, turning `before` into `write.after`.
    private func allows(_ write: ResolvedWrite, before: Node, as caller: Caller, now: Int64) -> Bool {
        guard case .user(let auth) = caller else { return true }
        return rules.canWrite(write.changed, before: before, after: write.after, auth: auth, now: Double(now))
    }

    /// Whether the rules would let `caller` make `operation` now (without making it): the check
    /// an onDisconnect write gets when it is registered.
    public func mayWrite(_ operation: WriteOperation, as caller: Caller) -> Bool {
        guard case .user = caller else { return true }
        let serverTime = clock()
        // A server value that cannot resolve against today's data (an increment that would
        // overflow) is not a question for the rules; the write is judged again when it runs.
        guard let write = try? resolve(operation, on: root, serverTime: serverTime) else { return true }
        return allows(write, before: root, as: caller, now: serverTime)
    }

    /// A new push id made with the server clock.
    public func nextPushID() -> String { pushIDs.next(milliseconds: clock()) }

    private func validate(_ operation: WriteOperation) throws(ServerError) {
        try NamespaceDatabase.check(operation)
    }

    /// Checks a write without applying it: the path may be written and the data is valid.
    public static func check(_ operation: WriteOperation) throws(ServerError) {
        if operation.path.firstKey == .info {
            throw ServerError(.notAllowed, "\(operation.path.wireForm) is read-only: .info is kept by each client.")
        }
        do {
            switch operation {
            case .set(let path, let node):
                try Validation.validateWrite(node, at: path)
            case .update(let path, let children):
                try Validation.validateUpdate(children, at: path)
            }
        } catch {
            throw ServerError(.invalidArgument, error.message)
        }
    }

    // MARK: - Listener updates

    private func overwriteDeliveries(at path: TreePath, old: Node) -> [Delivery] {
        listens.overwriteDeliveries(at: path, old: old, new: root)
    }

    private func mergeDeliveries(at path: TreePath, children: [(path: TreePath, node: Node)], old: Node) -> [Delivery] {
        listens.mergeDeliveries(at: path, children: children, old: old, new: root)
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
            // The tree now is the tree after the group's last write: only the group's writes have
            // changed it since the last commit (a write refused changes nothing). Keeping each
            // write's own tree instead held every intermediate tree of the group alive.
            let groupRoot = root
            let change = StoreChange(writes: group.flatMap(\.writes), settings: group.flatMap(\.settings))
            let failure = change.writes.isEmpty && change.settings.isEmpty ? nil : await commitOffActor(change)
            finish(group, root: groupRoot, failure: failure)
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

    /// Ends a group whose writes made the tree `root`: durable, or undone with every write after it.
    private func finish(_ group: [CommitPipeline.PendingWrite], root: Node, failure: (any Error)?) {
        guard let failure else {
            pipeline.committed(root)
            for write in group {
                for delivery in write.deliveries { delivery.subscriber.send(delivery.update) }
                write.completion(.committed(value: write.value))
            }
            return
        }
        // The failed group and every write applied after it are undone.
        let failed = pipeline.failed(group)
        restore(to: durableRoot, changedPaths: failed.flatMap(\.changedPaths))
        for write in failed { if let stamp = write.stamp { ledger.forget(stamp) } }
        let reason = (failure as? StorageError)?.summary ?? "the storage failed"
        let error = ServerError(.storageFailed, "The write could not be stored: \(reason). Nothing was written.", underlying: failure)
        for write in failed { write.completion(.failed(error)) }
    }

    // MARK: - Settings and lifecycle

    /// Whether the rules define the index a query with `params` at `path` orders by (`.indexOn`):
    /// always for key and priority order; for value order `.value`, for child order that child.
    /// Firebase serves unindexed queries too, but warns (`no_index`).
    public func isIndexed(_ path: TreePath, params: QueryParams) -> Bool {
        guard params.hasExplicitOrder else { return true }
        switch params.index {
        case .key, .priority: return true
        case .value: return rules.indexOn(at: path).contains(".value")
        case .child(let child): return rules.indexOn(at: path).contains(child.relativeForm)
        }
    }

    /// The rules in force, as installed (comments kept).
    public var rulesSource: String { rules.source }

    /// The rules in force as strict JSON.
    public var rulesStrictJSON: String { rules.strictJSON }

    /// Compiles `text`, stores it durably and judges every later request by it.
    ///
    /// - Throws: ``RulesError`` (with its line and column) when `text` does not compile, or the
    ///   store's error when it cannot be saved; the rules in force stay as they were.
    public func installRules(_ text: String) async throws {
        let compiled = try RuleSet(parsing: text)
        if let shared {
            try await commitSettingExclusively(StoreSetting(name: "rules", value: Array(text.utf8)), in: shared)
        } else {
            try await store.saveSetting(named: "rules", Array(text.utf8))
        }
        adoptRules(compiled, source: text)
    }

    /// Puts `compiled` in force and revokes the listens it no longer allows.
    func adoptRules(_ compiled: RuleSet, source: String) {
        rules = compiled
        storedRulesText = source
        revokeListensNoLongerAllowed()
    }

    /// Judges `subscriber`'s listens again as `caller` (its connection authenticated anew, or its
    /// token expired): the ones no longer allowed are revoked, the others kept under the new
    /// identity.
    public func reauthorize(_ subscriber: any DataSubscriber, as caller: Caller) {
        let revoked = listens.reauthorize(subscriber, as: caller) { mayRead($0, params: $1, as: $2) }
        for listen in revoked { listen.subscriber.revoked(path: listen.path, params: listen.params, tag: listen.tag) }
    }

    /// Removes every user listen the rules no longer allow and tells its subscriber (a `c` push,
    /// a `cancel` event).
    private func revokeListensNoLongerAllowed() {
        let revoked = listens.revokeNoLongerAllowed { mayRead($0, params: $1, as: $2) }
        for listen in revoked { listen.subscriber.revoked(path: listen.path, params: listen.params, tag: listen.tag) }
    }

    /// Waits for writes in flight to become durable, refuses new ones and closes the store.
    public func close() async throws {
        isClosed = true
        if pipeline.isRunning {
            await withCheckedContinuation { pipeline.waitUntilIdle($0) }
        }
        try await store.close()
    }
}
