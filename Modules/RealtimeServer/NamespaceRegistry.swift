import Foundation
import Logging
import Persistence

/// Opens each namespace's database on first use, one store directory per namespace.
actor NamespaceRegistry {
    private let configuration: ServerConfiguration
    private let backend: StorageBackend
    private let logger: Logger
    private var open: [String: NamespaceDatabase] = [:]
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

    /// The database of namespace `name` (the default namespace when `nil` or empty).
    func database(for name: String?) throws(ServerError) -> NamespaceDatabase {
        let name = (name?.isEmpty ?? true) ? configuration.defaultNamespace : name!
        guard !closed else { throw ServerError(.unavailable, "The server is shutting down.") }
        if let database = open[name] { return database }
        guard NamespaceRegistry.isValidName(name) else {
            throw ServerError(.invalidArgument, "Invalid namespace \"\(name)\": use 1 to 63 letters, digits, '-' and '_', starting with a letter or digit.")
        }
        let directory = (configuration.dataDirectory as NSString).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let store = try backend.open(directory)
            let engine = try StorageEngine(store: store)
            let database = try NamespaceDatabase(name: name, store: EngineServerStore(engine: engine))
            if configuration.rulesJSON != nil, try database.storedRules() == nil, let rules = configuration.rulesJSON {
                try database.saveRules(Array(rules.utf8))
            }
            open[name] = database
            logger.info("opened namespace", metadata: ["namespace": "\(name)", "directory": "\(directory)", "backend": "\(backend.name)"])
            return database
        } catch let error as ServerError {
            throw error
        } catch {
            logger.error("cannot open namespace", metadata: ["namespace": "\(name)", "error": "\(error)"])
            throw ServerError(.unavailable, "The namespace \(name) cannot be opened: \(error)")
        }
    }

    /// Closes every namespace after its writes in flight are durable.
    func closeAll() async {
        closed = true
        for (name, database) in open {
            do {
                try await database.close()
            } catch {
                logger.error("closing namespace failed", metadata: ["namespace": "\(name)", "error": "\(error)"])
            }
        }
        open = [:]
    }
}
