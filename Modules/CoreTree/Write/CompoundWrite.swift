/// A set of overwrites at paths relative to one location, as produced by a multi-path update or
/// by layering several pending writes.
///
/// A write at a path shadows everything below it: adding a write below an existing one updates
/// that write's value in place, and adding a write above existing ones replaces them.
public struct CompoundWrite: Sendable, Equatable {
    struct WriteTree: Sendable, Equatable {
        var value: Node?
        var children: SortedMap<ChildKey, WriteTree>

        static let empty = WriteTree(value: nil, children: SortedMap())

        var isEmpty: Bool { value == nil && children.isEmpty }

        func subtree(at keys: ArraySlice<ChildKey>) -> WriteTree? {
            guard let first = keys.first else { return self }
            return children[first]?.subtree(at: keys.dropFirst())
        }

        func setting(_ keys: ArraySlice<ChildKey>, to tree: WriteTree) -> WriteTree {
            guard let first = keys.first else { return tree }
            let child = (children[first] ?? .empty).setting(keys.dropFirst(), to: tree)
            var copy = self
            copy.children = child.isEmpty ? children.removing(first) : children.inserting(first, child)
            return copy
        }

        /// The write closest to the root on `keys`, with its depth.
        func rootmostValue(on keys: ArraySlice<ChildKey>, depth: Int = 0) -> (depth: Int, value: Node)? {
            if let value { return (depth, value) }
            guard let first = keys.first, let child = children[first] else { return nil }
            return child.rootmostValue(on: keys.dropFirst(), depth: depth + 1)
        }

        func forEachWrite(_ prefix: [ChildKey], _ body: (TreePath, Node) -> Void) {
            if let value {
                body(TreePath(keys: prefix), value)
                return
            }
            for (key, child) in children { child.forEachWrite(prefix + [key], body) }
        }
    }

    var tree: WriteTree

    init(tree: WriteTree) { self.tree = tree }

    /// A compound write with no writes.
    public static let empty = CompoundWrite(tree: .empty)

    /// A compound write holding the given writes, applied in order.
    public init(writes: some Sequence<(path: TreePath, node: Node)>) {
        var result = CompoundWrite.empty
        for write in writes { result = result.addingWrite(at: write.path, write.node) }
        self = result
    }

    /// Whether no write is held.
    public var isEmpty: Bool { tree.isEmpty }

    /// The write at the root itself, if any.
    public var rootWrite: Node? { tree.value }

    /// A compound write with `node` written at `path`.
    ///
    /// A write to `.../.priority` under an existing write whose parent location is empty is ignored,
    /// as priorities of nonexistent nodes are.
    public func addingWrite(at path: TreePath, _ node: Node) -> CompoundWrite {
        if path.isRoot { return CompoundWrite(tree: WriteTree(value: node, children: SortedMap())) }
        let keys = path.keys[...]
        if let (depth, value) = tree.rootmostValue(on: keys) {
            let relative = TreePath(keys: Array(keys.dropFirst(depth)))
            if relative.lastKey?.isPriorityKey == true, let parent = relative.parent, value.child(at: parent).isEmpty {
                return self
            }
            let updated = value.updatingChild(at: relative, to: node)
            return CompoundWrite(tree: tree.setting(keys.prefix(depth), to: WriteTree(value: updated, children: SortedMap())))
        }
        return CompoundWrite(tree: tree.setting(keys, to: WriteTree(value: node, children: SortedMap())))
    }

    /// A compound write with every write of `other` added below `path`.
    public func addingWrites(at path: TreePath, _ other: CompoundWrite) -> CompoundWrite {
        var result = self
        other.forEachWrite { relative, node in result = result.addingWrite(at: path.appending(relative), node) }
        return result
    }

    /// A compound write without the write at `path` and any writes below it.
    ///
    /// A write above `path` is not changed; use ``addingWrite(at:_:)`` with the empty node to
    /// clear data under such a write.
    public func removingWrite(at path: TreePath) -> CompoundWrite {
        if path.isRoot { return .empty }
        return CompoundWrite(tree: tree.setting(path.keys[...], to: .empty))
    }

    /// Whether the data at `path` is fully determined by these writes.
    public func hasCompleteWrite(at path: TreePath) -> Bool { completeNode(at: path) != nil }

    /// The data at `path` when these writes fully determine it, else `nil`.
    public func completeNode(at path: TreePath) -> Node? {
        let keys = path.keys[...]
        guard let (depth, value) = tree.rootmostValue(on: keys) else { return nil }
        return value.child(at: TreePath(keys: Array(keys.dropFirst(depth))))
    }

    /// The children at the root that these writes fully determine, in key order.
    public var completeChildren: [(key: ChildKey, node: Node)] {
        if let value = tree.value {
            return value.children.map { (key: $0.key, node: $0.value) }
        }
        return tree.children.compactMap { key, child in child.value.map { (key: key, node: $0) } }
    }

    /// The writes that apply at and below `path`, relative to `path`.
    public func childCompoundWrite(at path: TreePath) -> CompoundWrite {
        if path.isRoot { return self }
        if let node = completeNode(at: path) {
            return CompoundWrite(tree: WriteTree(value: node, children: SortedMap()))
        }
        return CompoundWrite(tree: tree.subtree(at: path.keys[...]) ?? .empty)
    }

    /// The compound writes for each child key that has writes, when there is no root write.
    public var childCompoundWrites: [(key: ChildKey, write: CompoundWrite)] {
        if let value = tree.value {
            return value.children.map { (key: $0.key, write: CompoundWrite(tree: WriteTree(value: $0.value, children: SortedMap()))) }
        }
        return tree.children.map { (key: $0.key, write: CompoundWrite(tree: $0.value)) }
    }

    /// Calls `body` with each write, shallowest paths first along each branch, in key order.
    public func forEachWrite(_ body: (TreePath, Node) -> Void) {
        tree.forEachWrite([], body)
    }

    /// The result of applying these writes to `node`.
    ///
    /// Priority writes are applied after the other writes at the same level, and only where the
    /// location is not empty.
    public func apply(to node: Node) -> Node {
        CompoundWrite.apply(tree, at: [], to: node)
    }

    private static func apply(_ tree: WriteTree, at keys: [ChildKey], to node: Node) -> Node {
        if let value = tree.value {
            return node.updatingChild(at: TreePath(keys: keys), to: value)
        }
        var result = node
        var priorityWrite: Node?
        for (key, child) in tree.children {
            if key.isPriorityKey {
                priorityWrite = child.value
            } else {
                result = apply(child, at: keys + [key], to: result)
            }
        }
        if let priorityWrite, !result.child(at: TreePath(keys: keys)).isEmpty {
            result = result.updatingChild(at: TreePath(keys: keys + [.priority]), to: priorityWrite)
        }
        return result
    }
}
