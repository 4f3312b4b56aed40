import CoreTree
import Dispatch
import Foundation
import Logging
import Persistence
import Presence
import QueryEngine
import SyncClient
import SyncProtocol
import Synchronization

/// The client's engine room: wires the sync tree, persistence, the connection, the `.info` tree,
/// onDisconnect bookkeeping and the transaction queue together.
///
/// All state lives on one serial domain, ``RepoQueue``: synchronous public API calls enter it
/// with ``perform(_:)`` (re-entrant, so a write is durable and its local events queued before the
/// call returns), `async` ones with ``performSuspending(_:)`` (the same guarantee, but the caller
/// suspends instead of blocking a cooperative thread); connection callbacks enter it
/// asynchronously, in the order the connection reports them. Listener blocks run on the callback
/// queue, in order.
///
/// `@unchecked Sendable` because every mutable property is touched only on ``queue``: the entry
/// points (``perform(_:)``, ``performSuspending(_:)``, ``onQueue(_:)``, ``enqueue(_:)``) put the
/// caller there, and ``raise(_:)``,
/// through which every state change reaches listeners, checks it.
final class Repo: @unchecked Sendable {
    struct Configuration {
        struct PersistenceSettings {
            var backend: String
            var directory: String
            var cacheSizeBytes: Int
        }
        var endpoint: ConnectionEndpoint
        var persistence: PersistenceSettings?
        var callbackQueue: DispatchQueue
        var tokenStore: AuthTokenStore
        var startOffline: Bool
        var transport: any Transport
        var backends: StorageBackends
        var transactionHandlers: TransactionHandlers
    }

    static var logger: Logger { ClientLog.logger }

    /// The serial domain that owns the state below.
    let queue = RepoQueue(label: "rtdb.repo")
    let callbackQueue: DispatchQueue
    weak var database: Database?
    let tokenStore: AuthTokenStore
    let connectionEndpoint: ConnectionEndpoint

    // State below is touched only on `queue`.
    let syncTree: SyncTree
    let infoSyncTree: SyncTree
    var info = InfoTree()
    var clock = ServerClock()
    var onDisconnects = OnDisconnectTree()
    var nextWriteId: Int64 = 1
    /// The stamped writes not settled yet, for exactly-once delivery.
    var stamps: OutstandingStamps
    let persistence: PersistenceManager?
    /// Why persistence, asked for, could not be opened (`nil` when it opened or was not asked for).
    let persistenceError: DatabaseError?
    let connection: PersistentConnection
    var observers: [DatabaseHandle: (registration: ObserverRegistration, query: QuerySpec)] = [:]
    /// The next observer handle; atomic, so a handle is made without entering the queue.
    let nextHandle = Atomic<DatabaseHandle>(1)
    var keptSynced: [QuerySpec: KeepSyncedRegistration] = [:]
    var transactions: [TransactionRecord] = []
    /// The app's named transaction handlers.
    let transactionHandlers: TransactionHandlers
    /// Named transactions restored from disk whose handlers are not registered yet.
    var waitingNamedTransactions: [(path: TreePath, named: TransactionRecord.Named)] = []
    var nextTransactionId = 1
    var pushIDs = PushIDGenerator()
    var isShutDown = false
    /// The last published count of unacknowledged writes, and who follows it.
    var lastPendingWriteCount = 0
    var pendingWriteObservers: [Int: AsyncStream<Int>.Continuation] = [:]
    /// The `waitForPendingWrites()` calls still waiting, by id (from ``nextObserverID``).
    var writeWaiters: [Int: WriteWaiter] = [:]
    /// The queries whose data the server sent in this connection (for ``SnapshotMetadata/isFromCache``).
    var syncedQueries: Set<QuerySpec> = []
    /// The observers that hear metadata-only changes (a subset of ``observers``).
    var metadataObservers: [DatabaseHandle: (registration: ObserverRegistration, query: QuerySpec)] = [:]
    var nextObserverID = 1

    init(database: Database, configuration: Configuration) {
        self.database = database
        self.callbackQueue = configuration.callbackQueue
        self.tokenStore = configuration.tokenStore
        self.connectionEndpoint = configuration.endpoint
        self.transactionHandlers = configuration.transactionHandlers
        let listens = RepoListenProvider()
        let infoListens = InfoListenProvider()
        let delegate = RepoConnectionDelegate()
        var persistence: PersistenceManager?
        var persistenceError: DatabaseError?
        if let settings = configuration.persistence {
            switch Repo.openPersistence(settings, backends: configuration.backends) {
            case .success(let opened): persistence = opened
            case .failure(let error): persistenceError = error
            }
        }
        self.persistence = persistence
        self.persistenceError = persistenceError
        stamps = OutstandingStamps(client: Repo.writerID(in: persistence))
        if let last = try? persistence?.engine.lastWriteId() { nextWriteId = last + 1 }
        syncTree = SyncTree(listenProvider: listens, persistence: persistence ?? NoPersistence())
        infoSyncTree = SyncTree(listenProvider: infoListens)
        connection = PersistentConnection(
            endpoint: configuration.endpoint, transport: configuration.transport, delegate: delegate,
            authTokenProvider: configuration.tokenStore)
        if let persistence {
            if tokenStore.wasSet {
                // Set before the store was open: keep it now.
                saveAuthToken(tokenStore.current, in: persistence)
            } else if let saved = try? persistence.engine.setting(named: Repo.authTokenSetting), !saved.isEmpty {
                tokenStore.restore(String(decoding: saved, as: UTF8.self))
            }
        }
        listens.repo = self
        infoListens.repo = self
        delegate.repo = self
        queue.sync {
            restoreWrites()
            restorePins()
        }
        resumeNamedTransactions()
        if configuration.startOffline { connection.goOffline() }
        connection.start()
    }

    private static func openPersistence(
        _ settings: Configuration.PersistenceSettings, backends: StorageBackends
    ) -> Result<PersistenceManager, DatabaseError> {
        do {
            let policy = try CachePolicy(maxBytes: settings.cacheSizeBytes)
            let backend = try backends.backend(named: settings.backend)
            try FileManager.default.createDirectory(atPath: settings.directory, withIntermediateDirectories: true)
            let (engine, report) = try StoreRecovery.open(backend, directory: settings.directory)
            if let report {
                logger.error("The local store was damaged (\(report.cause)); moved to \(report.movedTo), kept \(report.keptWrites) queued writes.")
            }
            return .success(try PersistenceManager(engine: engine, policy: policy))
        } catch {
            // Firebase goes on without persistence when the disk cache cannot be opened; so do we,
            // loudly, and the app can read why (`Database.persistenceError`).
            let failure: DatabaseError
            if let storage = error as? StorageError, case .inUse(let pid) = storage.code {
                let owner = pid.map { "process \($0)" } ?? "another process"
                failure = DatabaseError(
                    .persistenceInUse,
                    "The persistence directory \(settings.directory) is in use by \(owner); persistence is off for this Database. Open a directory from one process at a time, or give each its own persistenceDirectory.",
                    underlying: error)
            } else {
                failure = DatabaseError(
                    .storageFailure,
                    "Persistence is off for this Database: the local store at \(settings.directory) could not be opened (\(DatabaseError.reason(error))). Check the directory and the persistence settings; the Database works without persistence meanwhile.",
                    underlying: error)
            }
            logger.error("\(failure.message)")
            return .failure(failure)
        }
    }

    /// Runs `body` on the repo queue and waits; runs it directly when already there (a
    /// transaction block or a listener set up from inside the repo).
    func perform<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try queue.sync(body)
    }

    /// Runs `body` on the repo queue, after everything queued before it, and suspends until it
    /// has run: the entry point of the `async` API, which must not block a cooperative thread
    /// while a write is made durable.
    func performSuspending<T: Sendable, E: Error>(_ body: @escaping @Sendable (Repo) throws(E) -> T) async throws(E) -> T {
        try await queue.value { [self] () throws(E) -> T in try body(self) }
    }

    /// A callback for the connection that continues on the repo queue, if the repo still exists.
    func onQueue<Value: Sendable>(_ body: @escaping @Sendable (Repo, Value) -> Void) -> @Sendable (Value) -> Void {
        { [weak self] value in
            guard let self else { return }
            self.enqueue { body(self, value) }
        }
    }

    /// Runs `body` on the repo queue later, in order.
    func enqueue(_ body: @escaping @Sendable () -> Void) {
        queue.async(body)
    }

    /// The sync tree serving `path`: the `.info` tree or the database's.
    func tree(for path: TreePath) -> SyncTree {
        InfoTree.contains(path) ? infoSyncTree : syncTree
    }

    // MARK: - Raising events

    /// Hands events to their observers on the callback queue, in order, then the metadata-only
    /// events of observers whose snapshot's metadata changed (unless `checkMetadata` is false: the
    /// `.info` updates made in the middle of a change, before its own events are raised).
    func raise(_ events: [SyncEvent], checkMetadata: Bool = true) {
        queue.preconditionOnQueue()
        refreshPendingWriteCount()
        settleWriteWaiters()
        guard let database else { return }
        var deliveries: [@Sendable () -> Void] = []
        deliveries.reserveCapacity(events.count)
        for event in events {
            switch event {
            case .data(let data):
                guard let registration = data.registration as? ObserverRegistration else { continue }
                let isChildEvent = data.childName != nil
                let index = isChildEvent ? .priority : data.query.params.index
                let metadata = self.metadata(at: data.path, for: data.query)
                if registration.includeMetadataChanges { registration.lastDelivered = (data.node, data.path, index, metadata) }
                let snapshot = DataSnapshot(
                    node: data.node, ref: DatabaseReference(database: database, path: data.path), index: index, metadata: metadata)
                let previous = data.previousName?.stringValue
                deliveries.append { registration.deliver(snapshot, previousSiblingKey: previous) }
            case .cancel(let cancel):
                guard let registration = cancel.registration as? ObserverRegistration else { continue }
                observers[registration.handle] = nil
                metadataObservers[registration.handle] = nil
                let error = DatabaseError(status: WireStatus(rawValue: cancel.status), message: nil)
                deliveries.append { registration.cancelled(error) }
            }
        }
        if checkMetadata { addMetadataChanges(to: &deliveries, database: database) }
        guard !deliveries.isEmpty else { return }
        let batch = deliveries
        callbackQueue.async { for delivery in batch { delivery() } }
    }

    /// Runs a completion block on the callback queue.
    func complete(_ block: (@Sendable () -> Void)?) {
        guard let block else { return }
        callbackQueue.async(execute: block)
    }

    // MARK: - Lifecycle

    static let authTokenSetting = "auth_token"
    static let writerIDSetting = "writer_id"

    /// This client's id for exactly-once writes: the one kept in the local store, or a new one
    /// (saved there when there is a store). A client whose id cannot be saved uses a new one per
    /// run, so its sequence numbers never collide with an earlier run's.
    private static func writerID(in persistence: PersistenceManager?) -> String {
        if let saved = try? persistence?.engine.setting(named: writerIDSetting), let id = String(bytes: saved, encoding: .utf8),
           WriteStamp.isValidClient(id) {
            return id
        }
        let id = OutstandingStamps.newClientID()
        try? persistence?.engine.saveSetting(named: writerIDSetting, Array(id.utf8))
        return id
    }

    func authTokenChanged(_ token: String?) {
        perform {
            if let persistence { saveAuthToken(token, in: persistence) }
        }
        connection.refreshAuthToken()
    }

    private func saveAuthToken(_ token: String?, in persistence: PersistenceManager) {
        do {
            try persistence.engine.saveSetting(named: Repo.authTokenSetting, Array((token ?? "").utf8))
        } catch {
            Repo.logger.error("Could not keep the auth token on disk: \(error)")
        }
    }

    func shutdown() {
        perform {
            guard !isShutDown else { return }
            isShutDown = true
            for continuation in pendingWriteObservers.values { continuation.finish() }
            pendingWriteObservers = [:]
            failWriteWaiters()
            connection.shutdown()
            if let persistence {
                do { try persistence.engine.close() } catch { Repo.logger.error("Closing the local store failed: \(error)") }
            }
        }
    }

    /// Milliseconds since 1970 by the server's clock, as this client estimates it.
    var serverTime: Int64 { clock.serverMilliseconds() }
}
