public import CoreTree
public import Persistence

/// The embedded default ``ServerStore``: the namespace's tree as rows of a
/// ``Persistence/StorageEngine`` over any ``Persistence/OrderedKeyValueStore`` backend (SQLite,
/// LMDB, LevelDB or memory), one directory per namespace.
///
/// It decides its own layout: a change is written as the complete data at the change's
/// *anchor*, the path itself or, for paths too long for the engine's keys, the deepest ancestor
/// whose rows fit; a removal is written at the highest ancestor the removal left empty.
public final class EmbeddedServerStore: ServerStore {
    private let engine: StorageEngine

    /// Stores into `engine`.
    public init(engine: StorageEngine) { self.engine = engine }

    /// Opens the store over `store`.
    public convenience init(store: any OrderedKeyValueStore) throws {
        self.init(engine: try StorageEngine(store: store, accountsCacheSize: false))
    }

    public func load() throws -> Node { try engine.serverCache(at: .root) }

    public func commit(_ change: StoreChange) throws {
        var replacements: [(path: TreePath, node: Node)] = []
        replacements.reserveCapacity(change.changedPaths.count)
        for path in change.changedPaths {
            if let replacement = EmbeddedServerStore.replacement(for: path, in: change.root) {
                replacements.append(replacement)
            }
        }
        try engine.replaceData(replacements, settings: change.settings.map { ($0.name, $0.value) }, durable: true)
    }

    public func setting(named name: String) throws -> [UInt8]? { try engine.setting(named: name) }

    public func settings(withPrefix prefix: String) throws -> [StoreSetting] {
        try engine.settings(withPrefix: prefix).map { StoreSetting(name: $0.name, value: $0.value) }
    }

    public func saveSetting(named name: String, _ value: [UInt8]) throws { try engine.saveSetting(named: name, value) }

    public func close() throws { try engine.close() }

    /// What to write for a change at `path`: the complete new data at the path's anchor, or, when
    /// the data there is gone, the removal of the highest ancestor left empty. `nil` when a
    /// removal under a leaf changed nothing.
    static func replacement(for path: TreePath, in root: Node) -> (path: TreePath, node: Node)? {
        var target = StorageEngine.replacementAnchor(for: path)
        var node = root.child(at: target)
        if node.isEmpty {
            while let parent = target.parent, root.child(at: parent).isEmpty { target = parent }
            if let parent = target.parent, root.child(at: parent).isLeaf { return nil }
            node = .empty
        }
        return (target, node)
    }
}
