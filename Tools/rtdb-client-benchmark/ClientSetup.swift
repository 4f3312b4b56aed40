import ArgumentParser
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import RealtimeDatabase

/// Where a benchmark client keeps its local state: persistence off, or on with a named backend.
enum StoreKind: String, CaseIterable, Sendable, ExpressibleByArgument {
    case off, memory, sqlite, lmdb, leveldb

    /// The on-disk backends (what the cold start is about).
    static let diskBackends: [StoreKind] = [.sqlite, .lmdb, .leveldb]

    /// The label in tables: `off` reads as "persistence off".
    var label: String { self == .off ? "persistence off" : rawValue }
}

/// Makes client instances for the benchmarks and the scratch directories they use.
enum ClientSetup {
    /// A URL for clients that never connect (the port is never dialled).
    static let offlineURL = "http://127.0.0.1:9?ns=bench"

    /// Makes the LMDB and LevelDB backends available to `persistenceBackendName` (idempotent).
    static func registerBackends() {
        Database.registerPersistenceBackend(.lmdb)
        Database.registerPersistenceBackend(.leveldb)
    }

    /// A new independent client, configured but not started (nothing is opened until first use).
    ///
    /// - Parameters:
    ///   - url: the database URL.
    ///   - store: persistence off, or the backend to persist with.
    ///   - directory: the persistence directory (ignored when persistence is off).
    ///   - cacheBytes: the cache budget, when not the default.
    ///   - callbackQueue: the queue listener blocks run on, when not the client's own.
    static func makeDatabase(
        url: String, store: StoreKind, directory: String, cacheBytes: UInt? = nil, callbackQueue: DispatchQueue? = nil
    ) throws -> Database {
        let database = try Database(url: url)
        if store != .off {
            database.isPersistenceEnabled = true
            database.persistenceBackendName = store.rawValue
            database.persistenceDirectory = directory
            if let cacheBytes { database.persistenceCacheSizeBytes = cacheBytes }
        }
        if let callbackQueue { database.callbackQueue = callbackQueue }
        return database
    }

    /// A started client that never connects: `goOffline()` before first use.
    static func offlineDatabase(
        store: StoreKind, directory: String, url: String = offlineURL, cacheBytes: UInt? = nil,
        callbackQueue: DispatchQueue? = nil
    ) throws -> Database {
        let database = try makeDatabase(
            url: url, store: store, directory: directory, cacheBytes: cacheBytes, callbackQueue: callbackQueue)
        database.goOffline()
        return database
    }
}

/// A scratch directory under the system temporary directory, removed by ``remove()``.
struct ScratchDirectory: Sendable {
    let path: String

    /// Creates `<tmp>/rtdb-client-benchmark-<label>-<uuid>` (or under `base` when given).
    init(_ label: String, base: String? = nil) throws {
        let root = base ?? NSTemporaryDirectory()
        path = (root as NSString).appendingPathComponent("rtdb-client-benchmark-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A subdirectory path (not created).
    func sub(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

extension DatabaseReference {
    /// `setValue(_:)` without waiting for the server: durable in the local queue on return.
    ///
    /// In an `async` function a bare `ref.setValue(x)` resolves to the `async throws` overload
    /// (which waits for the server's acknowledgement), so async code calls this instead.
    func setValueLocally(_ value: Any?) {
        setValue(value)
    }
}
