public import CoreTree

/// Durable storage for one namespace's tree: what a server needs from a database engine.
///
/// The store holds the namespace's data; the server keeps in memory only what it caches, and is
/// the store's only writer (one store instance per namespace; a shared store has one per node).
/// A store promises:
///
/// - **Reads**: ``read(at:limit:)`` returns the data at a path as the last successful
///   ``commit(_:)`` left it (the empty node for a new store), priorities included, and the version
///   of that commit; ``readShallow(at:limit:)`` the children one level deep. Neither builds more
///   than `limit` bytes of answer.
/// - **Atomic commits**: a commit makes every change it carries durable, or none of them. After
///   it returns, reads, in this process or after the process is killed (SIGKILL) or the
///   machine loses power, return the committed data; after it throws, the data as before it.
/// - **Order**: commits apply in the order they are made; a commit is not visible to reads
///   before the ones made before it, and a read made after a commit returned sees it.
/// - **Settings**: small named byte strings (the security rules, the exactly-once ledger), kept
///   durably beside the tree. A commit may carry settings: they become durable in the same atomic
///   step as its tree change. An empty value removes a setting.
/// - **Close**: ``close()`` releases the store; every later call throws.
///
/// How the tree is laid out (rows per leaf, per subtree, a log) is the store's own business:
/// a commit hands it the new data at each written path, never the whole tree, so a commit costs
/// the size of its writes.
/// Every call is `async`: a store does its blocking work on threads of its own (the embedded
/// store on its commit thread) or on its database client's event loops (PostgreSQL), never on
/// the caller's, so a namespace actor awaits it without holding a cooperative thread.
///
/// `Tests/ServerStoreConformance` checks these promises; every implementation runs it.
public protocol ServerStore: Sendable {
    /// The data at `path` as the last successful commit left it (priorities included), with that
    /// commit's ``StoreChange/version``.
    ///
    /// - Throws: ``ServerError`` `tooBig` when the stored rows of the answer exceed `limit` bytes
    ///   (nothing that large is built in memory), or the store's errors.
    func read(at path: TreePath, limit: Int) async throws -> StoredData
    /// The children of `path` one level deep: each child's key, with its value when it is a leaf
    /// (Firebase's `shallow=true`). Found by seeking from child to child, so the cost grows with
    /// the number of children, not with their size.
    ///
    /// - Throws: ``ServerError`` `tooBig` when the answer would exceed `limit` bytes.
    func readShallow(at path: TreePath, limit: Int) async throws -> StoredShallowData
    /// Makes `change` durable, all or nothing.
    func commit(_ change: StoreChange) async throws
    /// The whole tree as one moment's commits left it, as JSON in export format (priorities as
    /// `.priority`), handed to `write` piece by piece while commits go on.
    ///
    /// The document reflects every commit that returned before the export began and none that
    /// began after it returned its first piece: each commit is in it whole or not at all. It is
    /// streamed, never built: memory stays small whatever the tree's size, and each piece (about
    /// 256 KB) is made only once `write` has taken the one before, so a slow receiver slows the
    /// export rather than filling memory. The store's read snapshot is held until the export
    /// ends; closing the store ends it with an error.
    ///
    /// - Parameter write: called with each piece in order; an error it throws ends the export.
    /// - Throws: `write`'s error, or the store's (a damaged row, a closed store).
    func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws
    /// A stored setting, or `nil`.
    func setting(named name: String) async throws -> [UInt8]?
    /// Every stored setting whose name starts with `prefix`, in no particular order.
    func settings(withPrefix prefix: String) async throws -> [StoreSetting]
    /// Stores a setting durably, replacing any earlier value (an empty value removes it).
    func saveSetting(named name: String, _ value: [UInt8]) async throws
    /// Closes the store; later calls throw.
    func close() async throws
}

extension ServerStore {
    /// The whole stored tree, however large (for tests and tools that mean it).
    public func load() async throws -> Node { try await read(at: .root, limit: .max).node }
}

/// The data a store holds at a path, and the version of the commit it reflects.
public struct StoredData: Sendable {
    /// The data (the empty node when nothing is stored there).
    public var node: Node
    /// The ``StoreChange/version`` of the last commit the data includes (for a shared store,
    /// the change log's sequence number).
    public var version: UInt64

    /// Stored data.
    public init(node: Node, version: UInt64) {
        self.node = node
        self.version = version
    }
}

/// A location's children one level deep, as stored.
public struct StoredShallowData: Sendable, Equatable {
    /// The location's own value when it is a leaf (it then has no children).
    public var leaf: Node?
    /// Each child's key and, when the child is a leaf, its value (`nil` for a child with children).
    public var children: [ChildKey: Node?]

    /// A shallow answer.
    public init(leaf: Node?, children: [ChildKey: Node?]) {
        self.leaf = leaf
        self.children = children
    }

    /// The answer as Firebase's `shallow=true` gives it: a leaf as itself, each child with
    /// children as `true`.
    public var node: Node {
        if let leaf { return leaf }
        var result: [ChildKey: Node] = [:]
        for (key, value) in children { result[key] = value ?? Node(.bool(true)) }
        return Node(children: result)
    }
}

/// The error a read gets when its answer is larger than one request may carry (Firebase's words).
extension ServerError {
    /// The most bytes one read may answer with: Firebase's 256 MB per response.
    public static let maxReadBytes = 256 * 1024 * 1024

    /// A read whose answer would exceed ``maxReadBytes`` (or the limit it was given).
    public static var readTooLarge: ServerError {
        ServerError(.tooBig, "Data requested exceeds the maximum size that can be accessed with a single request.")
    }
}

/// One commit: the writes that make it, in order, and the settings saved with them.
public struct StoreChange: Sendable {
    /// The writes in the order they were made: each replaces the data at its path with its node
    /// (the empty node removes it). A write may lie inside or above another; later ones win.
    public var writes: [StoreWrite]
    /// Settings made durable together with the writes, in order (an empty value removes the
    /// setting).
    public var settings: [StoreSetting]
    /// The namespace's number for this commit, returned by later reads as
    /// ``StoredData/version`` (0 when the caller does not number its commits).
    public var version: UInt64

    /// A change made of `writes`, with `settings` saved in the same step.
    public init(writes: [StoreWrite], settings: [StoreSetting] = [], version: UInt64 = 0) {
        self.writes = writes
        self.settings = settings
        self.version = version
    }

    /// The change that makes the stored data at each of `changedPaths` what it is in `root`.
    ///
    /// A path whose data is gone is written as the removal of its highest ancestor left empty
    /// in `root`: the writes that emptied it are not known, only their result.
    public init(root: Node, changedPaths: [TreePath], settings: [StoreSetting] = [], version: UInt64 = 0) {
        let writes = changedPaths.map { path -> StoreWrite in
            let node = root.child(at: path)
            guard node.isEmpty else { return StoreWrite(path: path, node: node) }
            var removed = path
            while let parent = removed.parent, root.child(at: parent).isEmpty { removed = parent }
            return StoreWrite(path: removed, node: .empty)
        }
        self.init(writes: writes, settings: settings, version: version)
    }

    /// The paths the writes change, in order.
    public var changedPaths: [TreePath] { writes.map(\.path) }

    /// The writes reduced to the outermost paths they touch, each with its final data: no path
    /// lies inside another, and writing them (in any order) leaves the same data as writing
    /// ``writes`` in order.
    public var coveringWrites: [StoreWrite] {
        var outermost: [TreePath] = []
        var finalData: [TreePath: Node] = [:]
        for write in writes {
            if let container = outermost.first(where: { $0.contains(write.path) }) {
                finalData[container] = container == write.path ? write.node
                    : finalData[container, default: .empty].updatingChild(at: write.path.relative(to: container)!, to: write.node)
            } else {
                outermost.removeAll { write.path.contains($0) }
                outermost.append(write.path)
                finalData[write.path] = write.node
            }
        }
        return outermost.map { StoreWrite(path: $0, node: finalData[$0] ?? .empty) }
    }
}

/// One write of a commit: the complete new data at a path.
public struct StoreWrite: Sendable, Equatable {
    /// Where.
    public var path: TreePath
    /// The data there afterwards (empty: removed).
    public var node: Node

    /// A write.
    public init(path: TreePath, node: Node) {
        self.path = path
        self.node = node
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
