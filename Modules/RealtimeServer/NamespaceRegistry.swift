import Dispatch
import Foundation
import Logging
import Persistence

/// Opens each namespace's database on first use, one store directory per namespace.
actor NamespaceRegistry {
    private let configuration: ServerConfiguration
    private let backend: StorageBackend
    private let logger: Logger
    /// Namespaces open or opening.
    private var open: [String: Task<NamespaceDatabase, any Error>] = [:]
    private var closed = false

    init(configuration: ServerConfiguration, backend: StorageBackend, logger: Logger) {
        self.configuration = configuration
        self.backend = backend
        self.logger = logger
    }

    /// Whether `name` can name a namespace: 1 to 63 letters, digits, `-` and `_`, starting with a
    /// letter or digit (it also names a directory).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63 else { return false }
        func allowed(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_")
        }
        return allowed(first) && first != "-" && first != "_" && name.unicodeScalars.allSatisfy(allowed)
    }

    /// The database of namespace `name` (the default namespace when `nil` or empty), opened on
    /// first use. Opening (the store, then the whole tree) runs off this actor and off the
    /// cooperative pool, so requests for other namespaces go on while one loads; requests for the
    /// opening namespace wait for it.
    func database(for name: String?) async throws(ServerError) -> NamespaceDatabase {
        let name = (name?.isEmpty ?? true) ? configuration.defaultNamespace : name!
        guard !closed else { throw ServerError(.unavailable, "The server is shutting down.") }
        let opening: Task<NamespaceDatabase, any Error>
        if let existing = open[name] {
            opening = existing
        } else {
            guard NamespaceRegistry.isValidName(name) else {
                throw ServerError(.invalidArgument, "Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' and '_', starting with a letter or digit.")
            }
            let directory = (configuration.dataDirectory as NSString).appendingPathComponent(name)
            let (backend, rules, logger) = (self.backend, configuration.rulesJSON, self.logger)
            opening = Task {
                try await NamespaceRegistry.openOffPool(name: name, directory: directory, backend: backend, rules: rules, logger: logger)
            }
            open[name] = opening
        }
        do {
            return try await opening.value
        } catch {
            if open[name] == opening { open[name] = nil }
            if let error = error as? ServerError { throw error }
            logger.error("cannot open a namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
            let reason = (error as? StorageError)?.summary ?? "its store failed to open"
            throw ServerError(.unavailable, "The namespace \(name) cannot be opened: \(reason).", underlying: error)
        }
    }

    /// Opens a namespace's store and loads its tree on a dispatch thread.
    private static func openOffPool(
        name: String, directory: String, backend: StorageBackend, rules: String?, logger: Logger
    ) async throws -> NamespaceDatabase {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    let store = try EmbeddedServerStore(store: try backend.open(directory))
                    let database = try NamespaceDatabase(name: name, store: store)
                    if let rules, try database.storedRules() == nil {
                        try database.saveRules(Array(rules.utf8))
                    }
                    logger.info("opened namespace", metadata: ["namespace": "\(name)", "directory": "\(directory)", "backend": "\(backend.name)"])
                    continuation.resume(returning: database)
                } catch {
                    logger.error("cannot open namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Closes every namespace after its writes in flight are durable.
    func closeAll() async {
        closed = true
        let opened = open
        open = [:]
        for (name, task) in opened {
            do {
                try await task.value.close()
            } catch {
                logger.error("closing namespace failed", metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
    }
}
