/// A storage backend: a name and how to open a store of that kind in a directory.
///
/// Each backend module adds its own (`StorageBackend.sqlite`, `.lmdb`, `.leveldb`); this module
/// has ``memory``. An app lists the ones it links in a ``StorageBackends`` registry.
public struct StorageBackend: Sendable {
    /// The name used to choose the backend at runtime, e.g. `"sqlite"`.
    public let name: String
    /// Opens (creating if needed) the store in a directory.
    public let open: @Sendable (_ directory: String) throws -> any OrderedKeyValueStore
    /// Opens (creating if needed) a store for a bulk load that is thrown away if it does not
    /// finish (an import's staging store): settings that favor speed over surviving a crash
    /// while the load runs. Its last batch is durable and it is closed before use; then ``open``
    /// opens it as any other store. Backends without such settings open it as usual.
    public let openForBulkLoad: @Sendable (_ directory: String) throws -> any OrderedKeyValueStore

    /// A backend called `name`, opened by `open` (and for a bulk load by `openForBulkLoad`,
    /// `open` when `nil`).
    public init(
        name: String, open: @escaping @Sendable (_ directory: String) throws -> any OrderedKeyValueStore,
        openForBulkLoad: (@Sendable (_ directory: String) throws -> any OrderedKeyValueStore)? = nil
    ) {
        self.name = name
        self.open = open
        self.openForBulkLoad = openForBulkLoad ?? open
    }

    /// Stores kept in this process's memory, shared per directory name until the process ends.
    public static let memory = StorageBackend(name: "memory") { try MemoryStore(directory: $0) }
}

/// The backends an app links, chosen by name at runtime.
public struct StorageBackends: Sendable {
    private let backends: [StorageBackend]

    /// A registry of `backends` (the first of two with one name wins).
    public init(_ backends: [StorageBackend]) { self.backends = backends }

    /// The names that can be opened, in registration order.
    public var names: [String] { backends.map(\.name) }

    /// The backend called `name`.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/unknownBackend(name:available:)``, listing the names available.
    public func backend(named name: String) throws -> StorageBackend {
        guard let backend = backends.first(where: { $0.name == name }) else {
            throw StorageError(
                .unknownBackend(name: name, available: names),
                "no storage backend is called '\(name)'; available: \(names.joined(separator: ", "))")
        }
        return backend
    }

    /// Opens the store called `name` in `directory`.
    public func open(_ name: String, directory: String) throws -> any OrderedKeyValueStore {
        try backend(named: name).open(directory)
    }
}
