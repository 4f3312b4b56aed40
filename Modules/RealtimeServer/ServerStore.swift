public import CoreTree
public import Persistence

/// Durable storage for one namespace's tree.
///
/// The server keeps the whole tree in memory and hands the store, for each group of writes, the
/// complete new data at each changed location; the store makes that durable atomically.
public protocol ServerStore: Sendable {
    /// The stored tree (read once, when the namespace opens).
    func load() throws -> Node
    /// Makes the replacements durable, all or nothing, in order. Each is the complete data now at
    /// its path, with the promises of ``Persistence/StorageEngine/replaceData(_:durable:)``.
    func commit(_ replacements: [(path: TreePath, node: Node)]) throws
    /// A stored setting (such as the security rules), or `nil`.
    func setting(named name: String) throws -> [UInt8]?
    /// Stores a setting durably.
    func saveSetting(named name: String, _ value: [UInt8]) throws
    /// Closes the store; later calls fail.
    func close() throws
}

/// The embedded default: a ``Persistence/StorageEngine`` over any ``Persistence/OrderedKeyValueStore``
/// backend (SQLite, LMDB, LevelDB or memory).
public final class EngineServerStore: ServerStore {
    private let engine: StorageEngine

    /// Stores into `engine`.
    public init(engine: StorageEngine) { self.engine = engine }

    public func load() throws -> Node { try engine.serverCache(at: .root) }

    public func commit(_ replacements: [(path: TreePath, node: Node)]) throws {
        try engine.replaceData(replacements, durable: true)
    }

    public func setting(named name: String) throws -> [UInt8]? { try engine.setting(named: name) }

    public func saveSetting(named name: String, _ value: [UInt8]) throws { try engine.saveSetting(named: name, value) }

    public func close() throws { try engine.close() }

    /// Where a write at `path` is stored as a whole.
    static func anchor(for path: TreePath) -> TreePath { StorageEngine.replacementAnchor(for: path) }
}
