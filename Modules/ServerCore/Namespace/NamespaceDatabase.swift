public import CoreTree
import Foundation
public import QueryEngine
import Persistence
public import SecurityRules
import SyncProtocol

/// One namespace's database: its store holds the data, memory a bounded cache of it, and a
/// pipeline makes writes durable before they are acknowledged.
///
/// **What is in memory.** Opening reads no data. Operations load what they need from the store
/// (a read or listen its location, a write the data its server values, compare-and-set hash and
/// security rules look at) into a ``ResidentTree`` of complete subtrees. A listen holds its
/// location resident while it lasts; everything else is evicted, least recently used first, when
/// the namespaces of the process use more than their shared ``CacheBudget``.
///
/// **Order.** Operations take turns in the order they arrive (``TurnQueue``): one that finds its
/// data resident runs at once, one that must load suspends while it loads and the later ones
/// wait behind it. So writes are decided in submission order against everything decided before
/// them, and a read sees every write submitted before it.
///
/// **Writes.** A write is validated, its server values resolved against the current data and
/// the server clock, judged by the rules, and applied to the resident data at once (later
/// operations see it). Its acknowledgement and the updates it causes for listeners wait until
/// its group of writes is durable: while one group is being synced, new writes gather into the
/// next (group commit). If a sync fails, that group and every write after it fail, and the
/// resident data is loaded again from the store.
public actor NamespaceDatabase {
    /// The namespace's name.
    public nonisolated let name: String
    let store: any ServerStore
    let clock: @Sendable () -> Int64
    /// Where commits, rule denials and cache use are counted (the server's metrics), if anywhere.
    let metrics: (any NamespaceMetrics)?
    /// The parts of the namespace in memory.
    var resident: ResidentTree
    /// The budget this namespace shares with the process's others.
    let budget: CacheBudget
    /// The resident data in place (only resident paths may be read from it).
    var root: Node { resident.data }
    /// The operations taking turns at the data.
    var turns = TurnQueue()
    /// Whether writes were undone since the data was last loaded: the next turn loads the held
    /// data again before anything else.
    var mustReload = false
    /// For a shared namespace: the resident data before the writes of the commit in flight were
    /// decided, to go back to when it fails (PostgreSQL may be unreachable then: no store read).
    var beforeSharedCommit: ResidentTree?
    /// The version given to the last decided write (embedded stores number their commits so).
    var lastVersion: UInt64 = 0
    /// The held bytes last counted (counting walks the entries: done when holds change).
    var lastHeldBytes = 0
    /// Lookups answered from memory and from the store, not yet reported to ``metrics``.
    var lookups = (hits: 0, misses: 0)
    /// Writes applied in memory and not yet durable, grouped for the store.
    var pipeline: CommitPipeline
    /// Every listen, with who holds it.
    var listens = ListenRegistry()
    var isClosed = false
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
    /// Whether the store is known to be damaged, and its background check.
    package nonisolated let health = NamespaceHealth()
    /// Why the stored rules could not be used when the namespace opened (it then denies everyone
    /// but administrators until new rules are installed).
    public nonisolated let rulesProblemAtOpen: RulesError?

    /// Opens the namespace over `store`; no data is read until an operation needs it.
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

    /// Opens a namespace that counts its commits and rule denials in `metrics` and keeps its
    /// resident data within its share of `budget` (a budget of its own when `nil`).
    package static func open(name: String, store: any ServerStore, clock: @escaping @Sendable () -> Int64 = NamespaceDatabase.systemClock,
                             defaultRules: String? = nil, writerRetention: Duration = NamespaceDatabase.defaultWriterRetention,
                             metrics: (any NamespaceMetrics)?, budget: CacheBudget? = nil) async throws -> NamespaceDatabase {
        var ledger = WriterLedger(retention: writerRetention.components.seconds * 1000)
        ledger.reload(try await store.settings(withPrefix: WriterLedger.settingPrefix))
        let shared = store as? any SharedServerStore
        // The version the store is at (the change log's place for a shared store), read where no
        // data is ever stored.
        let sequence = try await store.read(at: NamespaceDatabase.versionProbe, limit: 1024).version
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
            name: name, store: store, shared: shared, clock: clock, metrics: metrics, budget: budget ?? CacheBudget(metrics: metrics),
            sequence: sequence, ledger: ledger, rules: rules, rulesText: rulesText, rulesProblem: problem)
        await database.followOtherNodes()
        return database
    }

    private init(name: String, store: any ServerStore, shared: (any SharedServerStore)?, clock: @escaping @Sendable () -> Int64,
                 metrics: (any NamespaceMetrics)?, budget: CacheBudget, sequence: UInt64, ledger: WriterLedger, rules: RuleSet,
                 rulesText: String?, rulesProblem: RulesError?) {
        self.metrics = metrics
        self.name = name
        self.store = store
        self.shared = shared
        self.clock = clock
        self.ledger = ledger
        self.budget = budget
        resident = ResidentTree(budget: budget.limit)
        ledgerRemovals = self.ledger.sweep(now: clock(), force: true)
        lastVersion = sequence
        pipeline = CommitPipeline(durableVersion: sequence)
        follower = SharedLogFollower(at: sequence)
        self.rules = rules
        storedRulesText = rulesText
        rulesProblemAtOpen = rulesProblem
    }

    /// A path no data is ever stored at (`.info` is each client's own): reading it costs nothing
    /// and tells the version the store is at.
    static let versionProbe = TreePath(keys: [.info])

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

    /// A new push id made with the server clock.
    public func nextPushID() -> String { pushIDs.next(milliseconds: clock()) }

    /// What this namespace keeps in memory now (for tests and statistics).
    package var cacheUsage: CacheBudget.Usage {
        CacheBudget.Usage(bytes: resident.bytes, heldBytes: resident.heldBytes, entries: resident.entryCount)
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
        try refuseIfDamaged()
        let compiled = try RuleSet(parsing: text)
        if let shared {
            try await commitSettingExclusively(StoreSetting(name: "rules", value: Array(text.utf8)), in: shared)
        } else {
            try await store.saveSetting(named: "rules", Array(text.utf8))
        }
        await startTurn()
        defer { endTurn() }
        await adoptRules(compiled, source: text)
    }

    /// Waits for writes in flight to become durable, refuses new ones and closes the store.
    public func close() async throws {
        isClosed = true
        health.closed()
        if pipeline.isRunning {
            await withCheckedContinuation { pipeline.waitUntilIdle($0) }
        }
        budget.report(name, nil)
        try await store.close()
    }
}
