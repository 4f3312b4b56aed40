public import CoreTree
import Dispatch
import Foundation
public import Persistence

/// The embedded default ``ServerStore``: the namespace's tree as rows of a
/// ``Persistence/StorageEngine`` over any ``Persistence/OrderedKeyValueStore`` backend (SQLite,
/// LMDB, LevelDB or memory), one directory per namespace.
///
/// The store owns its commit thread: every call runs there, in the order made, and the caller
/// awaits it without blocking (an fsync holds only this store's thread).
///
/// It decides its own layout: a change is written as the complete data at the change's
/// *anchor*, the path itself or, for paths too long for the engine's keys, the deepest ancestor
/// whose rows fit; a removal is written at the highest ancestor the removal left empty.
public final class EmbeddedServerStore: ServerStore {
    private let engine: StorageEngine
    private let thread: DispatchQueue

    /// Stores into `engine`.
    public init(engine: StorageEngine) {
        self.engine = engine
        thread = DispatchQueue(label: "rtdb.store")
    }

    /// Opens the store over `store`, on the calling thread (it reads the store's format record):
    /// for callers on threads of their own. Async code uses ``open(_:directory:)``.
    public convenience init(store: any OrderedKeyValueStore) throws {
        self.init(engine: try StorageEngine(store: store, accountsCacheSize: false))
    }

    /// Opens (creating it when new) the store of `backend` in `directory`, on a thread of its own.
    public static func open(_ backend: StorageBackend, directory: String) async throws -> EmbeddedServerStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "rtdb.store.open").async {
                continuation.resume(with: Result {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    return try EmbeddedServerStore(store: try backend.open(directory))
                })
            }
        }
    }

    /// Runs `work` on the store's thread and hands back its result.
    private func onThread<T: Sendable>(_ work: @escaping @Sendable (StorageEngine) throws -> T) async throws -> T {
        let engine = self.engine
        return try await withCheckedThrowingContinuation { continuation in
            thread.async { continuation.resume(with: Result { try work(engine) }) }
        }
    }

    public func load() async throws -> Node { try await onThread { try $0.serverCache(at: .root) } }

    public func commit(_ change: StoreChange) async throws {
        try await onThread { engine in
            var replacements: [(path: TreePath, node: Node)] = []
            replacements.reserveCapacity(change.changedPaths.count)
            for path in change.changedPaths {
                if let replacement = EmbeddedServerStore.replacement(for: path, in: change.root) {
                    replacements.append(replacement)
                }
            }
            try engine.replaceData(replacements, settings: change.settings.map { ($0.name, $0.value) }, durable: true)
        }
    }

    public func setting(named name: String) async throws -> [UInt8]? { try await onThread { try $0.setting(named: name) } }

    public func settings(withPrefix prefix: String) async throws -> [StoreSetting] {
        try await onThread { engine in
            try engine.settings(withPrefix: prefix).map { StoreSetting(name: $0.name, value: $0.value) }
        }
    }

    public func saveSetting(named name: String, _ value: [UInt8]) async throws {
        try await onThread { try $0.saveSetting(named: name, value) }
    }

    public func close() async throws { try await onThread { try $0.close() } }

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
