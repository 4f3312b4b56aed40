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
/// - **Settings**: small named byte strings (the security rules, say), kept durably beside the
///   tree and independent of it.
/// - **Close**: ``close()`` releases the store; every later call throws.
///
/// How the tree is laid out (rows per leaf, per subtree, a log) is the store's own business:
/// a commit hands it the new tree and the paths where it differs from the last committed one.
/// `Tests/ServerStoreConformance` checks these promises; every implementation runs it.
public protocol ServerStore: Sendable {
    /// The stored tree.
    func load() throws -> Node
    /// Makes `change` durable, all or nothing.
    func commit(_ change: StoreChange) throws
    /// A stored setting, or `nil`.
    func setting(named name: String) throws -> [UInt8]?
    /// Stores a setting durably, replacing any earlier value.
    func saveSetting(named name: String, _ value: [UInt8]) throws
    /// Closes the store; later calls throw.
    func close() throws
}

/// One commit: the namespace's complete tree after it, and where that tree differs from the tree
/// of the last commit.
public struct StoreChange: Sendable {
    /// The whole tree after the change.
    public var root: Node
    /// The paths whose data changed, in the order they were written; the data at every other
    /// path is as the last commit left it. A path may lie inside or above another.
    public var changedPaths: [TreePath]

    /// A change to `root` at `changedPaths`.
    public init(root: Node, changedPaths: [TreePath]) {
        self.root = root
        self.changedPaths = changedPaths
    }
}
