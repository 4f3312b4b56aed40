import CoreTree
import Foundation
public import Logging
import PostgresNIO
public import ServerCore
import Synchronization

/// Opens namespaces' ``PostgresServerStore``s on one PostgreSQL database, for one rtdb-server
/// node, and follows the other nodes' commits.
///
/// It holds a connection pool (postgres-nio reconnects by itself after PostgreSQL restarts or
/// the network drops) and one connection listening on `rtdb_changes`: each notification wakes
/// the open stores of its namespace. A missed notification only delays a node: every open store
/// is also woken every ``pollInterval``, and when the listening connection comes back.
public final class PostgresStoreProvider: ServerStoreProvider {
    /// The provider's name in logs.
    public let name = "postgres"
    /// This node's name in `rtdb_nodes` (its lease) and `rtdb_ondisconnect`.
    public let nodeID = UUID().uuidString.lowercased()
    /// How long a node's lease lasts without renewal: the longest a dead node's onDisconnect
    /// writes wait before another node runs them is about this plus the poll interval.
    public static let leaseSeconds = 5
    let client: PostgresClient
    let logger: Logger
    /// How many log entries each namespace keeps (a node further behind loads the whole tree).
    let logRetention: Int64
    /// How often every open store is woken even without a notification.
    let pollInterval: Duration
    private let handlers = Mutex<[String: [UUID: @Sendable () -> Void]]>([:])
    private let migrated = Mutex(false)
    private let tasks = Mutex<[Task<Void, Never>]>([])
    /// When the last health check failed (`nil` while PostgreSQL answers): writes then fail at
    /// once instead of waiting for a connection the pool cannot make.
    /// Health checks failed in a row: two mark PostgreSQL unreachable (one slow answer on a busy
    /// machine does not), from `since`.
    private let health = Mutex<(failedChecks: Int, unreachableSince: ContinuousClock.Instant?)>((0, nil))

    /// A provider for the database at `url` (`postgres://user:password@host:port/database`).
    ///
    /// - Throws: ``PostgresStoreError`` when the URL is malformed. Nothing connects until
    ///   ``prepare()`` or the first namespace opens.
    public init(url: String, logger: Logger, logRetention: Int = 10_000, pollInterval: Duration = .seconds(1)) throws {
        client = PostgresClient(configuration: try PostgresURL.configuration(url, settings: PostgresSessionSettings.node), backgroundLogger: logger)
        self.logger = logger
        self.logRetention = Int64(max(logRetention, 1))
        self.pollInterval = pollInterval
        let client = self.client
        let run = Task { await client.run() }
        tasks.withLock { $0 = [run] }
        // Both run until ``shutdown()`` cancels them.
        let follow = Task { [self] in await followNotifications() }
        let poll = Task { [self] in await pollPeriodically() }
        tasks.withLock { $0 += [follow, poll] }
    }

    /// Connects and migrates the schema: call it at start-up, so a wrong URL or an unreachable
    /// database stops the server with a clear message instead of failing each namespace.
    public func prepare() async throws {
        try await PostgresStoreProvider.bounded("connecting to PostgreSQL", seconds: 30) { [self] in
            try await migrateOnce()
        }
    }

    public func openStore(namespace: String) async throws -> any ServerStore {
        try await PostgresStoreProvider.bounded("opening namespace \(namespace)") { [self] in
            try await migrateOnce()
            try await client.query(
                "INSERT INTO rtdb_namespaces (name) VALUES (\(namespace)) ON CONFLICT (name) DO NOTHING", logger: logger)
        }
        return PostgresServerStore(namespace: namespace, provider: self)
    }

    /// Streams namespace `name`'s whole data as JSON in export format to `write`, from one
    /// `REPEATABLE READ` snapshot, while the nodes serving it go on committing (see
    /// ``ServerCore/ServerStore/exportSnapshot(_:)``).
    ///
    /// Unlike ``openStore(namespace:)`` it writes nothing: no node lease, no namespace row (a
    /// namespace never written exports as `null`). For `rtdb-server export --backend postgres`.
    ///
    /// - Throws: the database's error (an unreachable server, a database without the schema),
    ///   or `write`'s.
    public func exportNamespace(_ name: String, _ write: ([UInt8]) async throws -> Void) async throws {
        try await PostgresExport.run(namespace: name, client: client, logger: logger, write: write)
    }

    public func shutdown() async {
        let (client, logger, nodeID) = (self.client, self.logger, self.nodeID)
        // A node that stops cleanly ran its connections' onDisconnect writes already: give up the lease.
        _ = try? await PostgresStoreProvider.bounded("giving up the lease", seconds: 2) {
            try await client.query("DELETE FROM rtdb_nodes WHERE node_id = \(nodeID)", logger: logger)
            return true
        }
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    private func migrateOnce() async throws {
        if migrated.withLock({ $0 }) { return }
        try await PostgresSchema.migrate(client, logger: logger)
        try await renewLease()
        migrated.withLock { $0 = true }
    }

    /// Renews this node's lease (the health check does it every poll interval).
    private func renewLease() async throws {
        let seconds = "\(PostgresStoreProvider.leaseSeconds) seconds"
        try await client.query("""
            INSERT INTO rtdb_nodes (node_id, lease_until) VALUES (\(nodeID), now() + \(seconds)::interval)
            ON CONFLICT (node_id) DO UPDATE SET lease_until = excluded.lease_until
            """, logger: logger)
    }

    public func claimOrphanedOnDisconnects() async throws -> [OrphanedOnDisconnect] {
        try checkReachable("claiming orphaned onDisconnect writes")
        let (client, logger) = (self.client, self.logger)
        // Rows claimed by a transaction that commits after this gave up would be run by no one.
        let gate = CommitGate()
        let claimed = try await PostgresStoreProvider.bounded("claiming orphaned onDisconnect writes", seconds: 5, gate: gate) {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("DELETE FROM rtdb_nodes WHERE lease_until < now()", logger: logger)
                // Rows of nodes without a lease: DELETE ... RETURNING hands each to one claimant.
                var rows: [(String, String)] = []
                for try await row in try await connection.query("""
                    DELETE FROM rtdb_ondisconnect o
                    WHERE NOT EXISTS (SELECT 1 FROM rtdb_nodes n WHERE n.node_id = o.node_id)
                    RETURNING namespace, writes
                    """, logger: logger).decode((String, String).self) {
                    rows.append(row)
                }
                try gate.enterCommit()
                return rows
            }
        }
        var orphans: [OrphanedOnDisconnect] = []
        for (namespace, text) in claimed {
            do {
                orphans.append(OrphanedOnDisconnect(namespace: namespace, writes: try LogEntryCoding.decode(held: text)))
            } catch {
                logger.error("dropping damaged onDisconnect writes of a dead node", metadata: ["namespace": "\(namespace)", "error": "\(error)"])
            }
        }
        return orphans
    }

    // MARK: - Following other nodes

    func addHandler(_ id: UUID, namespace: String, _ handler: @escaping @Sendable () -> Void) {
        handlers.withLock { $0[namespace, default: [:]][id] = handler }
    }

    func removeHandler(_ id: UUID, namespace: String) {
        handlers.withLock { $0[namespace]?[id] = nil }
    }

    private func wake(_ namespace: String?) {
        let woken: [@Sendable () -> Void] = handlers.withLock { all in
            if let namespace { return Array(all[namespace, default: [:]].values) }
            return all.values.flatMap(\.values)
        }
        for handler in woken { handler() }
    }

    private func followNotifications() async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: "rtdb_changes") { notifications in
                        // Listening again after a gap: whatever was notified meanwhile is caught up now.
                        self.wake(nil)
                        for try await notification in notifications { self.wake(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("PostgreSQL notifications interrupted; listening again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Checks PostgreSQL every ``pollInterval`` (a `SELECT 1` bounded to two seconds) and wakes
    /// every open store, so a missed notification or an outage's end is caught up.
    private func pollPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: pollInterval)
            let (client, logger) = (self.client, self.logger)
            let answered = (try? await PostgresStoreProvider.bounded("checking PostgreSQL", seconds: 3) { [self] in
                if migrated.withLock({ $0 }) { try await renewLease() } else { try await client.query("SELECT 1", logger: logger) }
                return true
            }) ?? false
            let (healthy, wasDown) = health.withLock { state -> (Bool, Bool) in
                let wasDown = state.unreachableSince != nil
                state.failedChecks = answered ? 0 : state.failedChecks + 1
                let healthy = state.failedChecks < 2
                state.unreachableSince = healthy ? nil : (state.unreachableSince ?? .now)
                return (healthy, wasDown)
            }
            if healthy, wasDown { logger.notice("PostgreSQL answers again") }
            if !healthy, !wasDown { logger.error("PostgreSQL does not answer; writes fail until it does, reads and listens go on from memory") }
            if answered { wake(nil) }
        }
    }

    /// Throws at once while the last health check failed.
    func checkReachable(_ what: String) throws(PostgresStoreError) {
        if let since = health.withLock({ $0.unreachableSince }) {
            let seconds = Int((ContinuousClock.now - since).components.seconds)
            throw PostgresStoreError("PostgreSQL has not answered for \(seconds) s; \(what) was not attempted.")
        }
    }

    // MARK: - Bounded waits

    /// Runs `work`, failing with ``PostgresStoreError`` after `seconds`: a write must fail fast
    /// when PostgreSQL is unreachable (the pool would otherwise wait for a connection).
    ///
    /// The work runs in a task of its own that is cancelled, not awaited, when time runs out: a
    /// task group would wait for it, and a request stuck in the pool after PostgreSQL restarted
    /// once held a node's shutdown forever that way. A transaction that writes passes a `gate`
    /// and calls ``CommitGate/enterCommit()`` before it commits, so that once this has failed it
    /// rolls back instead of committing later; if time runs out after its `COMMIT` was sent, the
    /// error says the outcome is unknown (``PostgresStoreError/Code/outcomeUnknown``).
    static func bounded<T: Sendable>(_ what: String, seconds: Int = 10, gate: CommitGate? = nil,
                                     _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        // The first of the work, its deadline and the caller's cancellation to finish settles it.
        let race = OneShot<T, PostgresStoreError>()
        let worker = Task {
            do {
                race.settle(.success(try await work()))
            } catch let error as PostgresStoreError {
                race.settle(.failure(error))
            } catch {
                race.settle(.failure(PostgresStoreError("PostgreSQL failed while \(what).", underlying: error)))
            }
        }
        /// The failure when the work is given up for `reason`.
        @Sendable func givenUp(_ reason: String) -> PostgresStoreError {
            if let gate, !gate.abandon() {
                return PostgresStoreError("\(reason) while \(what), after the commit was sent: it may have been made", code: .outcomeUnknown)
            }
            return PostgresStoreError("\(reason) while \(what).")
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            race.settle(.failure(givenUp("PostgreSQL did not answer within \(seconds) s")))
        }
        let result = await withTaskCancellationHandler {
            await race.result()
        } onCancel: {
            race.settle(.failure(givenUp("Cancelled")))
        }
        worker.cancel()
        timer.cancel()
        return try result.get()
    }
}
