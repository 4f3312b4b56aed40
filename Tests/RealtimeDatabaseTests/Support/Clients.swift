import CoreTree
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import SyncClient
import SyncProtocol
@testable import RealtimeDatabase
import TestSupport

/// Makes client instances for the end-to-end tests: independent `Database` objects against one
/// server, each with its own persistence directory unless told otherwise.
enum Clients {
    static let registered: Void = {
        Database.registerPersistenceBackend(.lmdb)
        Database.registerPersistenceBackend(.leveldb)
    }()

    /// Returns once `database` is connected (`.info/connected` is true): a barrier for reads that
    /// must reach the server (`getData(source: .server)` gives up after a few seconds without a
    /// connection, which a loaded machine can take to make one).
    static func waitUntilConnected(_ database: Database) async throws {
        for try await event in database.reference(withPath: ".info/connected").events(of: [.value]) where event.snapshot.value as? Bool == true {
            return
        }
    }

    /// A client of `server` in `namespace`; with `backend` set, persistence is on there, in
    /// `directory`, which the test picks (``temporaryDirectory(_:)``) and removes.
    static func make(
        _ server: ServerProcess, namespace: String, backend: String? = nil, directory: String? = nil,
        cacheSizeBytes: UInt? = nil
    ) throws -> Database {
        try make(url: server.databaseURL(namespace: namespace), backend: backend, directory: directory, cacheSizeBytes: cacheSizeBytes)
    }

    static func make(url: String, backend: String? = nil, directory: String? = nil, cacheSizeBytes: UInt? = nil) throws -> Database {
        _ = registered
        // A directory picked here would be left behind: nobody would remove it.
        if backend != nil, directory == nil { throw SupportFailure("a client with persistence needs a directory the test removes") }
        let database = try Database(url: url)
        if let backend, let directory {
            database.isPersistenceEnabled = true
            database.persistenceBackendName = backend
            database.persistenceDirectory = directory
            if let cacheSizeBytes { database.persistenceCacheSizeBytes = cacheSizeBytes }
        }
        return database
    }

    /// A new path in the temporary directory (nothing is made there): the test removes it.
    static func temporaryDirectory(_ label: String) -> String {
        NSTemporaryDirectory() + "rtdb-\(label)-\(UUID().uuidString)"
    }

    static func namespace(_ label: String) -> String {
        label + UUID().uuidString.prefix(8).lowercased()
    }
}

/// Collects what observers saw, from the callback queue, for assertions on the test's task.
final class Recorder: @unchecked Sendable {
    // `entries` is guarded by `lock`.
    private let lock = NSLock()
    private var entries: [String] = []

    func record(_ entry: String) { lock.withLock { entries.append(entry) } }
    var all: [String] { lock.withLock { entries } }
    var count: Int { all.count }
    func contains(_ entry: String) -> Bool { all.contains(entry) }

    /// Waits until `count` entries have arrived.
    func waitFor(count: Int, timeout: Duration = .seconds(30)) async throws -> Bool {
        try await waitUntil(timeout: timeout) { self.count >= count }
    }

    /// Waits until an entry equal to `entry` has arrived.
    func waitFor(_ entry: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        try await waitUntil(timeout: timeout) { self.contains(entry) }
    }
}

extension Database {
    /// The namespace this client talks to.
    var namespaceForTests: String { repo.connectionEndpoint.namespace }
}

extension DataSnapshot {
    /// The snapshot as compact JSON, for comparisons.
    var json: String { node.jsonString(format: .plain) }
}

extension DatabaseReference {
    /// `setValue` without waiting for the server. In an `async` function a bare `setValue(x)`
    /// picks the `async throws` overload (as with Firebase's SDK), so tests call this instead.
    func write(_ value: Any?) { setValue(value) }

    /// `setValue(from:)` without waiting for the server.
    func writeEncoded<T: Encodable>(_ value: T) throws { try setValue(from: value) }

    /// `setPriority` without waiting for the server.
    func writePriority(_ priority: Any?) { setPriority(priority) }
}
