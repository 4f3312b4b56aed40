public import Foundation
public import Persistence
import CoreTree
import Logging
import SyncClient
import SyncProtocol
import Synchronization

/// The entry point: one database (a server and a namespace) and its local state (Firebase's `Database`).
///
/// Settings (`isPersistenceEnabled`, `persistenceCacheSizeBytes`, the backend, `useEmulator`) must
/// be made before the first ``reference()``; the client starts then. Instances from
/// ``database()`` and ``database(url:)`` are shared per URL and live for the process;
/// ``init(url:)`` makes an independent client (several clients in one process, tests, tools),
/// which ``shutdown()`` closes.
public final class Database: Sendable {
    /// The settings, and the client once started.
    private struct State {
        var url: DatabaseURL
        var started: Repo?
        var persistenceEnabled = false
        var cacheBudgetBytes = UInt(CachePolicy.defaultBytes)
        var backendName: String?
        var directory: String?
        var queue = DispatchQueue(label: "rtdb.callbacks")
        var startOffline = false
        var configuredApp: FirebaseApp?
        var transport: any Transport = WebSocketTransport()
    }

    private let state: Mutex<State>
    private let tokenStore = AuthTokenStore()
    /// The app's named transaction handlers.
    let transactionHandlers = TransactionHandlers()

    /// The transport the connection uses; tests swap in an in-memory one before first use.
    var transport: any Transport {
        get { state.withLock { $0.transport } }
        set { state.withLock { $0.transport = newValue } }
    }
    static var logger: Logger { ClientLog.logger }

    /// The client library's version.
    public static let version = "0.2.0"

    /// The client library's version (Firebase's `Database.sdkVersion()`).
    public static func sdkVersion() -> String { version }

    /// Turns the client's debug logging on or off (through swift-log: `debug` when on, `info`
    /// when off; the process's log handler decides where it goes).
    public static func setLoggingEnabled(_ enabled: Bool) { ClientLog.setEnabled(enabled) }

    // MARK: - Instances

    /// The default database: the URL given to ``configure(url:)``, else the emulator named by the
    /// environment (`FIREBASE_DATABASE_EMULATOR_HOST=host:port`, with `FIREBASE_DATABASE_NAMESPACE`,
    /// default `default`), else `FIREBASE_DATABASE_URL`.
    ///
    /// Stops the program with a message saying how to configure one when none is configured.
    public static func database() -> Database {
        if let app = FirebaseApp.app(), app.options.databaseURL != nil { return database(app: app) }
        guard let url = Registry.shared.defaultURL() else {
            preconditionFailure("""
                No database is configured. Call Database.configure(url: "https://<namespace>.firebaseio.com") \
                (or "http://host:port?ns=<namespace>" for rtdb-server) before Database.database(), \
                or set FIREBASE_DATABASE_EMULATOR_HOST=host:port (and FIREBASE_DATABASE_NAMESPACE), \
                or FIREBASE_DATABASE_URL.
                """)
        }
        return database(url: url)
    }

    /// The shared database at `url` (`https://<namespace>.firebaseio.com` or
    /// `http://host:port?ns=<namespace>`). Stops the program if the URL is malformed.
    public static func database(url: String) -> Database {
        Registry.shared.database(url: url)
    }

    /// The app this database belongs to, when it was obtained through one
    /// (``database(app:)``, or ``database()`` after ``FirebaseApp/configure()``).
    public var app: FirebaseApp? { state.withLock { $0.configuredApp } }

    func setApp(_ app: FirebaseApp) { state.withLock { $0.configuredApp = app } }

    /// Sets the URL ``database()`` uses.
    public static func configure(url: String) {
        Registry.shared.configure(url: url)
    }

    /// A new, independent client of the database at `url` (not shared with ``database(url:)``).
    ///
    /// - Throws: ``DatabaseError`` with code `invalidArgument` for a malformed URL.
    public init(url: String) throws(DatabaseError) {
        state = Mutex(State(url: try DatabaseURL(parsing: url)))
    }

    init(parsed: DatabaseURL) {
        state = Mutex(State(url: parsed))
    }

    // MARK: - Settings (before first use)

    /// Keep the synced data and the queue of unacknowledged writes on disk, so they survive a
    /// restart. Set before the first ``reference()``.
    public var isPersistenceEnabled: Bool {
        get { state.withLock { $0.persistenceEnabled } }
        set { setting("isPersistenceEnabled") { $0.persistenceEnabled = newValue } }
    }

    /// The most cached data to keep on disk, in bytes (10 MB by default; 1 MB to 100 MB).
    /// Least-recently-used data is pruned first; data being listened to or kept synced never is.
    public var persistenceCacheSizeBytes: UInt {
        get { state.withLock { $0.cacheBudgetBytes } }
        set { setting("persistenceCacheSizeBytes") { $0.cacheBudgetBytes = newValue } }
    }

    /// The storage backend for persistence, by name: `sqlite` (the default with the package's
    /// default `SQLite` trait), `memory`, or a backend added with ``registerPersistenceBackend(_:)``
    /// (`lmdb`, `leveldb`). With the `SQLite` trait off, the default is the last backend
    /// registered, else `memory`.
    public var persistenceBackendName: String {
        get { state.withLock { $0.backendName } ?? Registry.shared.defaultBackendName() }
        set { setting("persistenceBackendName") { $0.backendName = newValue } }
    }

    /// The directory for persistence; by default a folder per database under
    /// `$XDG_DATA_HOME/rtdb` (or `~/.local/share/rtdb`).
    public var persistenceDirectory: String {
        get { state.withLock { $0.directory ?? Database.defaultDirectory(for: $0.url) } }
        set { setting("persistenceDirectory") { $0.directory = newValue } }
    }

    /// The queue listener and completion blocks run on (a private serial queue by default).
    public var callbackQueue: DispatchQueue {
        get { state.withLock { $0.queue } }
        set { setting("callbackQueue") { $0.queue = newValue } }
    }

    /// Connect to a local emulator or rtdb-server at `host:port` (plain HTTP) instead of the URL's host.
    public func useEmulator(withHost host: String, port: Int) {
        setting("useEmulator") { state in
            state.url.endpoint = ConnectionEndpoint(host: host, port: port, secure: false, namespace: state.url.endpoint.namespace)
        }
    }

    /// Trusts only the certificates in `pem` (one or more PEM certificates: a private certificate
    /// authority, or a self-signed server's own certificate) when connecting to an `https://`
    /// database, instead of the system's certificate authorities. Set before first use.
    ///
    /// - Throws: ``DatabaseError`` with code `invalidArgument` when `pem` holds no readable certificate.
    public func useTrustedCertificates(pem: String) throws(DatabaseError) {
        let transport: WebSocketTransport
        do {
            transport = try WebSocketTransport(trustedCertificatesPEM: pem)
        } catch {
            throw DatabaseError(.invalidArgument, "useTrustedCertificates: \(error.message)", underlying: error)
        }
        setting("useTrustedCertificates") { $0.transport = transport }
    }

    /// Makes a storage backend available to ``persistenceBackendName`` (for example `LMDBStore.lmdb`
    /// from the `PersistenceLMDB` product).
    public static func registerPersistenceBackend(_ backend: StorageBackend) {
        Registry.shared.register(backend)
    }

    private func setting(_ name: String, _ change: (inout State) -> Void) {
        state.withLock { state in
            precondition(
                state.started == nil,
                "Database.\(name) must be set before any other use of the Database instance (the first reference() starts it).")
            change(&state)
        }
    }

    // MARK: - References

    /// The root of the database.
    public func reference() -> DatabaseReference {
        _ = repo
        return DatabaseReference(database: self, path: .root)
    }

    /// The location at `path` (segments separated by `/`). Stops the program for an invalid
    /// path, as Firebase does; check user input with ``DatabaseReference/validatePath(_:)`` first.
    public func reference(withPath path: String) -> DatabaseReference {
        _ = repo
        return DatabaseReference(database: self, path: DatabaseReference.validatedPath(path))
    }

    /// The location named by a full URL of this database.
    public func reference(fromURL databaseUrl: String) -> DatabaseReference {
        let parsed: DatabaseURL
        do {
            parsed = try DatabaseURL(parsing: databaseUrl)
        } catch {
            preconditionFailure(error.message)
        }
        let current = state.withLock { $0.url }
        precondition(
            parsed.endpoint.namespace == current.endpoint.namespace,
            "reference(fromURL:) was given \(databaseUrl), which is not in this database (namespace \(current.endpoint.namespace)).")
        return reference(withPath: parsed.path)
    }

    // MARK: - Connection

    /// Disconnects from the server; local writes and events go on, writes queue until ``goOnline()``.
    /// Called before first use, the client starts without connecting at all.
    public func goOffline() {
        state.withLock { if $0.started == nil { $0.startOffline = true } }
        repo.connection.goOffline()
    }

    /// Reconnects after ``goOffline()``.
    public func goOnline() { repo.connection.goOnline() }

    /// Drops every write not yet acknowledged by the server (locally and from the disk queue);
    /// their completion blocks get `write_canceled` and listeners see the data revert.
    public func purgeOutstandingWrites() { repo.purgeOutstandingWrites() }

    /// Why persistence could not be opened, when it was turned on: the directory is in use by
    /// another process (``DatabaseError/Code-swift.struct/persistenceInUse``, naming it) or the
    /// store failed (``DatabaseError/Code-swift.struct/storageFailure``). The instance then works
    /// without persistence, as Firebase's does; `nil` when persistence opened or is off.
    public var persistenceError: DatabaseError? { repo.persistenceError }

    /// Sets the auth token sent to the server (a JWT, or an emulator token such as `owner`), or
    /// signs out with `nil`. With persistence on, the token is kept across restarts. A JWT whose
    /// `exp` has passed is not sent: writes wait, queued, until a fresh token is set.
    public func setAuthToken(_ token: String?) {
        tokenStore.set(token)
        if let repo = startedRepo { repo.authTokenChanged(token) }
    }

    /// Closes the connection and the local store. The instance cannot be used afterwards.
    public func shutdown() {
        startedRepo?.shutdown()
    }

    /// The client when it has started (no start is caused).
    var startedRepo: Repo? { state.withLock { $0.started } }

    /// The client, started at first use.
    var repo: Repo {
        state.withLock { state in
            if let started = state.started { return started }
            let configuration = Repo.Configuration(
                endpoint: state.url.endpoint,
                persistence: state.persistenceEnabled
                    ? .init(
                        backend: state.backendName ?? Registry.shared.defaultBackendName(),
                        directory: state.directory ?? Database.defaultDirectory(for: state.url),
                        cacheSizeBytes: Int(state.cacheBudgetBytes))
                    : nil,
                callbackQueue: state.queue,
                tokenStore: tokenStore,
                startOffline: state.startOffline,
                transport: state.transport,
                backends: Registry.shared.backends(),
                transactionHandlers: transactionHandlers)
            let repo = Repo(database: self, configuration: configuration)
            state.started = repo
            return repo
        }
    }

    /// The URL of a location.
    func url(forPath path: TreePath) -> String {
        state.withLock { $0.url }.url(forPath: path.wireForm)
    }

    static func defaultDirectory(for url: DatabaseURL) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".local/share")
        let name = "\(url.endpoint.host)_\(url.endpoint.port)_\(url.endpoint.namespace)"
            .map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-" ? $0 : "_" }
        return (base as NSString).appendingPathComponent("rtdb/" + String(name))
    }
}
