import CoreTree
import Foundation
package import Logging
package import Persistence
import Synchronization

/// Opens each namespace's database on first use, one store directory per namespace, and keeps
/// at most ``Settings/maxOpenNamespaces`` open.
///
/// Every user of a namespace holds a lease (a REST request while it runs, an event stream or
/// WebSocket connection while it is open). Opening one namespace too many closes the least
/// recently used one that nobody holds; when all are held, the new one is refused with 503.
package actor NamespaceRegistry {
    /// How namespaces are named, opened and kept.
    package struct Settings: Sendable {
        /// The namespace of requests that name none.
        package var defaultNamespace: String
        /// Where each embedded namespace's store lives (one directory per namespace).
        package var dataDirectory: String
        /// The most namespaces open at once.
        package var maxOpenNamespaces: Int
        /// Security rules JSON to install in every namespace that has none.
        package var rulesJSON: String?
        /// How long a namespace remembers a client's stamped writes after its last one.
        package var writerRetention: Duration
        /// The clock for time stamps and timeouts.
        package var clock: ServerClock
        /// The bytes every open namespace's resident data may take together (see ``CacheBudget``).
        package var cacheBytes: Int
        /// Whether each embedded namespace's store is checked as a whole in the background after
        /// it opens (``NamespaceDatabase/startBackgroundCheck(of:logger:)``).
        package var backgroundCheck = true

        /// Settings for a registry.
        package init(defaultNamespace: String, dataDirectory: String, maxOpenNamespaces: Int, rulesJSON: String?,
                     writerRetention: Duration, clock: ServerClock, cacheBytes: Int = CacheBudget.defaultLimit) {
            self.cacheBytes = cacheBytes
            self.defaultNamespace = defaultNamespace
            self.dataDirectory = dataDirectory
            self.maxOpenNamespaces = maxOpenNamespaces
            self.rulesJSON = rulesJSON
            self.writerRetention = writerRetention
            self.clock = clock
        }
    }

    private let configuration: Settings
    private let stores: NamespaceStores
    private let logger: Logger
    private let warnings: LimitWarnings
    /// Namespaces open or opening.
    private var entries: [String: Entry] = [:]
    /// Namespaces being closed to make room: a reopen waits for the close to finish.
    private var closing: [String: Task<Void, Never>] = [:]
    private var tick: UInt64 = 0
    private var closed = false

    private struct Entry {
        let opening: Task<NamespaceDatabase, any Error>
        var leases = 0
        var lastUsed: UInt64
    }

    private let metrics: (any NamespaceMetrics)?
    /// The memory budget the open namespaces share.
    private let budget: CacheBudget

    package init(configuration: Settings, stores: NamespaceStores, logger: Logger, warnings: LimitWarnings,
                 metrics: (any NamespaceMetrics)? = nil) {
        self.metrics = metrics
        budget = CacheBudget(limit: configuration.cacheBytes, metrics: metrics)
        self.configuration = configuration
        self.stores = stores
        self.logger = logger
        self.warnings = warnings
    }

    /// Throws `invalidArgument`, saying what a name may be, unless ``isValidName(_:)``.
    public static func checkName(_ name: String) throws(ServerError) {
        guard isValidName(name) else {
            throw ServerError(.invalidArgument, "Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' and '_', starting with a letter or digit.")
        }
    }

    /// Whether `name` can name a namespace: 1 to 63 letters, digits, `-` and `_`, starting with a
    /// letter or digit (it also names a directory).
    package static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63 else { return false }
        func allowed(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
        }
        return allowed(first) && first != "-" && first != "_" && name.unicodeScalars.allSatisfy(allowed)
    }

    /// Namespaces open or opening now.
    package var openCount: Int { entries.count }

    /// Leases the database of namespace `name` (the default namespace when `nil` or empty),
    /// opening it on first use; give it back with ``release(_:)``.
    ///
    /// Opening (the store; no data) runs off this actor and off the cooperative pool,
    /// so requests for other namespaces go on while one loads; requests for the opening namespace
    /// wait for it.
    package func lease(for name: String?) async throws(ServerError) -> NamespaceDatabase {
        let name = (name?.isEmpty ?? true) ? configuration.defaultNamespace : name!
        guard !closed else { throw ServerError(.unavailable, "The server is shutting down.") }
        let opening: Task<NamespaceDatabase, any Error>
        if let existing = entries[name] {
            opening = existing.opening
        } else {
            try NamespaceRegistry.checkName(name)
            try makeRoom()
            let directory = (configuration.dataDirectory as NSString).appendingPathComponent(name)
            let (stores, rules, logger, writerRetention, metrics, clock, budget, backgroundCheck) = (
                self.stores, configuration.rulesJSON, self.logger, configuration.writerRetention, self.metrics, configuration.clock, self.budget,
                configuration.backgroundCheck)
            let previousClose = closing[name]
            opening = Task {
                await previousClose?.value
                return try await NamespaceRegistry.open(
                    name: name, directory: directory, stores: stores, rules: rules, writerRetention: writerRetention, metrics: metrics,
                    budget: budget, clock: clock, backgroundCheck: backgroundCheck, logger: logger)
            }
            entries[name] = Entry(opening: opening, lastUsed: tick)
        }
        tick += 1
        entries[name]?.leases += 1
        entries[name]?.lastUsed = tick
        do {
            return try await opening.value
        } catch {
            if let entry = entries[name], entry.opening == opening {
                entries[name]?.leases -= 1
                if entries[name]?.leases == 0 { entries[name] = nil }
            }
            if let error = error as? ServerError { throw error }
            logger.error("cannot open a namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
            let reason = (error as? StorageError)?.summary ?? "its store failed to open"
            throw ServerError(.unavailable, "The namespace \(name) cannot be opened: \(reason).", underlying: error)
        }
    }

    /// Like ``lease(for:)``, but gives up after `timeout` with 503 (the lease, if it comes later,
    /// is given back at once).
    package func lease(for name: String?, within timeout: Duration) async throws(ServerError) -> NamespaceDatabase {
        // The first of the lease and its timeout to finish settles it.
        let race = OneShot<NamespaceDatabase, ServerError>()
        let attempt = Task { () -> Result<NamespaceDatabase, ServerError> in
            do throws(ServerError) {
                return .success(try await self.lease(for: name))
            } catch {
                return .failure(error)
            }
        }
        let timer = Task {
            try? await configuration.clock.sleep(for: timeout)
            race.settle(.failure(ServerError(.unavailable, "The namespace is still opening; try again shortly.")))
        }
        Task {
            let result = await attempt.value
            if !race.settle(result), case .success(let database) = result { self.release(database) }
        }
        let result = await race.result()
        timer.cancel()
        return try result.get()
    }

    /// Gives back a lease taken with ``lease(for:)``.
    package func release(_ database: NamespaceDatabase) {
        guard entries[database.name] != nil else { return }
        tick += 1
        entries[database.name]?.leases -= 1
        entries[database.name]?.lastUsed = tick
    }

    /// Closes the least recently used namespace nobody holds when the registry is full.
    private func makeRoom() throws(ServerError) {
        guard entries.count >= configuration.maxOpenNamespaces else { return }
        guard let (name, entry) = entries.filter({ $0.value.leases == 0 }).min(by: { $0.value.lastUsed < $1.value.lastUsed }) else {
            warnings.warn(.namespaces, "refusing to open namespaces: all \(configuration.maxOpenNamespaces) open ones are in use (--max-open-namespaces)")
            throw ServerError(.unavailable, "The server has as many namespaces open as it allows, all in use; try again shortly.")
        }
        entries[name] = nil
        let logger = self.logger
        let previousClose = closing[name]
        let close = Task {
            await previousClose?.value
            do {
                try await entry.opening.value.close()
                logger.info("closed idle namespace to make room", metadata: ["namespace": "\(name)"])
            } catch {
                logger.error("closing namespace failed", metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
        closing[name] = close
        Task {
            await close.value
            self.closeFinished(name, close)
        }
    }

    private func closeFinished(_ name: String, _ task: Task<Void, Never>) {
        if closing[name] == task { closing[name] = nil }
    }

    /// Opens a namespace's store (the store does its blocking work on a thread of its own); no
    /// data is read until a request needs it. With `backgroundCheck`, an embedded store is then
    /// checked as a whole in the background while the namespace serves requests.
    private static func open(
        name: String, directory: String, stores: NamespaceStores, rules: String?, writerRetention: Duration, metrics: (any NamespaceMetrics)?,
        budget: CacheBudget, clock: ServerClock, backgroundCheck: Bool, logger: Logger
    ) async throws -> NamespaceDatabase {
        do {
            let store: any ServerStore
            var embedded: EmbeddedServerStore?
            switch stores {
            case .embedded(let backend):
                let opened = try await EmbeddedServerStore.open(backend, directory: directory)
                embedded = opened
                store = opened
            case .provided(let provider):
                store = try await provider.openStore(namespace: name)
            }
            let database = try await NamespaceDatabase.open(
                name: name, store: store, clock: clock.milliseconds, defaultRules: rules, writerRetention: writerRetention, metrics: metrics,
                budget: budget)
            if let problem = database.rulesProblemAtOpen {
                logger.error("the stored rules do not compile; the namespace denies everyone but administrators until new rules are installed",
                             metadata: ["namespace": "\(name)", "error": "\(problem)"])
            }
            logger.info("opened namespace", metadata: ["namespace": "\(name)", "directory": "\(directory)", "backend": "\(stores.name)"])
            if backgroundCheck, let embedded { database.startBackgroundCheck(of: embedded, logger: logger) }
            return database
        } catch {
            logger.error("cannot open namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
            throw error
        }
    }

    /// Closes every namespace after its writes in flight are durable.
    package func closeAll() async {
        closed = true
        let opened = entries
        entries = [:]
        for (_, close) in closing { await close.value }
        for (name, entry) in opened {
            do {
                try await entry.opening.value.close()
            } catch {
                logger.error("closing namespace failed", metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
    }
}

/// Where namespaces' stores come from.
package enum NamespaceStores: Sendable {
    /// One directory per namespace in the data directory, on a storage backend.
    case embedded(StorageBackend)
    /// A provider's stores (PostgreSQL, shared by several nodes).
    case provided(any ServerStoreProvider)

    package var name: String {
        switch self {
        case .embedded(let backend): backend.name
        case .provided(let provider): provider.name
        }
    }
}
