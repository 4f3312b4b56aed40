public import CoreTree

/// Durable storage for one namespace's tree: what a server needs from a database engine.
///
/// The server keeps the namespace's whole tree in memory and is its only writer through this
/// store (one store instance per namespace). A store promises:
///
/// - **Load**: ``load()`` returns the tree as the last successful ``commit(_:)`` left it
///   (the empty node for a new store), priorities included.
/// - **Atomic commits**: a commit makes every change it carries durable, or none of them. After
///   it returns, ``load()``, in this process or after the process is killed (SIGKILL) or the
///   machine loses power, returns the committed tree; after it throws, the tree as before it.
/// - **Order**: commits apply in the order they are made; a commit is not visible to ``load()``
///   before the ones made before it.
/// - **Settings**: small named byte strings (the security rules, the exactly-once ledger), kept
///   durably beside the tree. A commit may carry settings: they become durable in the same atomic
///   step as its tree change. An empty value removes a setting.
/// - **Close**: ``close()`` releases the store; every later call throws.
///
/// How the tree is laid out (rows per leaf, per subtree, a log) is the store's own business:
/// a commit hands it the new tree and the paths where it differs from the last committed one.
/// Every call is `async`: a store does its blocking work on threads of its own (the embedded
/// store on its commit thread) or on its database client's event loops (PostgreSQL), never on
/// the caller's, so a namespace actor awaits it without holding a cooperative thread.
///
/// `Tests/ServerStoreConformance` checks these promises; every implementation runs it.
public protocol ServerStore: Sendable {
    /// The stored tree.
    func load() async throws -> Node
    /// Makes `change` durable, all or nothing.
    func commit(_ change: StoreChange) async throws
    /// A stored setting, or `nil`.
    func setting(named name: String) async throws -> [UInt8]?
    /// Every stored setting whose name starts with `prefix`, in no particular order.
    func settings(withPrefix prefix: String) async throws -> [StoreSetting]
    /// Stores a setting durably, replacing any earlier value (an empty value removes it).
    func saveSetting(named name: String, _ value: [UInt8]) async throws
    /// Closes the store; later calls throw.
    func close() async throws
}

/// One commit: the namespace's complete tree after it, and where that tree differs from the tree
/// of the last commit.
public struct StoreChange: Sendable {
    /// The whole tree after the change.
    public var root: Node
    /// The paths whose data changed, in the order they were written; the data at every other
    /// path is as the last commit left it. A path may lie inside or above another.
    public var changedPaths: [TreePath]
    /// Settings made durable together with the tree change, in order (an empty value removes
    /// the setting).
    public var settings: [StoreSetting]

    /// A change to `root` at `changedPaths`, with `settings` saved in the same step.
    public init(root: Node, changedPaths: [TreePath], settings: [StoreSetting] = []) {
        self.root = root
        self.changedPaths = changedPaths
        self.settings = settings
    }
}

/// A named setting stored beside a namespace's tree (the security rules, say).
public struct StoreSetting: Sendable, Equatable {
    /// The setting's name (`rules`).
    public var name: String
    /// Its bytes; empty removes the setting.
    public var value: [UInt8]

    /// A setting.
    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }
}
