import Foundation
import Persistence
import Synchronization
#if SQLite
import PersistenceSQLite
#endif

/// The shared database instances, the configured default URL and the registered storage backends.
final class Registry: Sendable {
    static let shared = Registry()

    private struct State {
        var instances: [DatabaseURL: Database] = [:]
        var configuredURL: String?
        var extraBackends: [StorageBackend] = []
    }

    private let state = Mutex(State())

    func configure(url: String) {
        state.withLock { $0.configuredURL = url }
    }

    func defaultURL() -> String? {
        if let configured = state.withLock({ $0.configuredURL }) { return configured }
        return environmentURL()
    }

    /// The database the environment names: the emulator host (with its namespace), else
    /// `FIREBASE_DATABASE_URL`.
    func environmentURL() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let host = environment["FIREBASE_DATABASE_EMULATOR_HOST"], !host.isEmpty {
            let namespace = environment["FIREBASE_DATABASE_NAMESPACE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
            return "http://\(host)?ns=\(namespace)"
        }
        return environment["FIREBASE_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Calls `body` with every database instance made through ``database(url:)``.
    func forEachDatabase(_ body: (Database) -> Void) {
        for database in state.withLock({ Array($0.instances.values) }) { body(database) }
    }

    func database(url text: String) -> Database {
        let parsed: DatabaseURL
        do {
            parsed = try DatabaseURL(parsing: text)
        } catch {
            preconditionFailure(error.message)
        }
        let key = DatabaseURL(endpoint: parsed.endpoint)
        return state.withLock { state in
            if let existing = state.instances[key] { return existing }
            let database = Database(parsed: key)
            state.instances[key] = database
            return database
        }
    }

    func register(_ backend: StorageBackend) {
        state.withLock { state in
            state.extraBackends.removeAll { $0.name == backend.name }
            state.extraBackends.append(backend)
        }
    }

    /// The backends linked into the package (SQLite with the `SQLite` trait) and registered by the app.
    func backends() -> StorageBackends {
        StorageBackends(Registry.linkedBackends + state.withLock { $0.extraBackends })
    }

    /// The backend persistence uses unless the app names one: SQLite when the `SQLite` trait
    /// links it, else the last backend the app registered, else the in-memory store.
    func defaultBackendName() -> String {
        #if SQLite
        return StorageBackend.sqlite.name
        #else
        return state.withLock { $0.extraBackends.last?.name } ?? StorageBackend.memory.name
        #endif
    }

    private static var linkedBackends: [StorageBackend] {
        #if SQLite
        [.memory, .sqlite]
        #else
        [.memory]
        #endif
    }
}
