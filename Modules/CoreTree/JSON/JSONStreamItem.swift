/// One piece of a document read by ``JSONStreamReader``: the complete data at a path.
///
/// Pieces are *sets*, in document order: applying them one after the other to an empty tree
/// with ``apply(to:)`` (Firebase's set semantics) gives the tree ``Node/init(json:)-(Sequence<UInt8>)``
/// parses from the same document. A path whose last key is `.priority` carries the priority of
/// its parent, an object too large to come in one piece; it comes after the object's children.
public struct JSONStreamItem: Sendable, Hashable, CustomStringConvertible {
    /// Where the data goes.
    public var path: TreePath
    /// The complete data at ``path``: a subtree, a priority (a number or string leaf, or a
    /// server-value placeholder kept in the wire's shape, as the whole-document parser keeps it),
    /// or empty to remove what an earlier piece put there.
    public var node: Node
    /// Whether an earlier piece may have put data at or below ``path`` that this one replaces.
    ///
    /// `false` promises that nothing was written at or below ``path`` before, so a consumer
    /// writing into an empty store may add this piece's rows without deleting anything. It is
    /// `true` only after a member whose name was not above every earlier name of its (large)
    /// object (a document whose keys are in Firebase key order, as every export is, has none):
    /// for that member, for the priority of an object such a member may have emptied (the
    /// priority of an empty node is dropped), and for an object's `.value` written over members
    /// that came before it.
    public var replaces: Bool
    /// Whether ``node`` may hold server-value placeholders (`{".sv": ...}`, also as a priority),
    /// to resolve before it is stored; `false` promises it holds none.
    public var containsServerValues: Bool

    /// A piece holding `node` at `path`.
    public init(path: TreePath, node: Node, replaces: Bool = false, containsServerValues: Bool = false) {
        self.path = path
        self.node = node
        self.replaces = replaces
        self.containsServerValues = containsServerValues
    }

    /// Whether this piece carries the priority of the node at `path.parent`.
    public var isPriority: Bool { path.lastKey?.isPriorityKey == true }

    public var description: String {
        "\(path.wireForm) = \(node.jsonString(format: .export))\(replaces ? " (replaces)" : "")"
    }

    /// Applies this piece to `root` as a set: the node at ``path`` becomes ``node``; a priority
    /// piece sets its parent's priority (nothing when the parent is empty).
    ///
    /// - Complexity: O(depth × log n).
    public func apply(to root: inout Node) {
        if isPriority, let parent = path.parent, ServerValue.isPlaceholder(node) {
            // A server value as the priority stays in the wire's shape, as the parser keeps it.
            let target = root.child(at: parent)
            guard !target.isEmpty else { return }
            root = root.updatingChild(at: parent, to: ServerValue.carrying(target, priority: node))
            return
        }
        root = root.updatingChild(at: path, to: node)
    }
}
