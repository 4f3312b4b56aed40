public import CoreTree

/// An immutable tree of optional values addressed by ``TreePath``: the shape the sync tree, merges
/// and acknowledgement sets are kept in.
public struct ImmutableTree<Value> {
    /// The value at the root of this tree, if any.
    public var value: Value?
    /// The subtrees by child key.
    public var children: SortedMap<ChildKey, ImmutableTree<Value>>

    /// A tree with an optional root value and children.
    public init(value: Value? = nil, children: SortedMap<ChildKey, ImmutableTree<Value>> = SortedMap()) {
        self.value = value
        self.children = children
    }

    /// The empty tree.
    public static var empty: ImmutableTree { ImmutableTree() }

    /// Whether the tree holds no value anywhere.
    public var isEmpty: Bool { value == nil && children.isEmpty }

    /// The value at `path`, if any.
    public func value(at path: TreePath) -> Value? { subtree(at: path)?.value }

    /// The subtree at `path`, if the tree reaches there.
    public func subtree(at path: TreePath) -> ImmutableTree? {
        var tree = self
        for key in path.keys {
            guard let child = tree.children[key] else { return nil }
            tree = child
        }
        return tree
    }

    /// The subtree at `path`, or an empty tree.
    public func subtreeOrEmpty(at path: TreePath) -> ImmutableTree { subtree(at: path) ?? .empty }

    /// A tree with `value` at `path`.
    public func setting(_ path: TreePath, _ value: Value) -> ImmutableTree {
        updating(path.keys[...]) { ImmutableTree(value: value, children: $0.children) }
    }

    /// A tree with `tree` replacing the subtree at `path`.
    public func settingTree(_ path: TreePath, _ tree: ImmutableTree) -> ImmutableTree {
        updating(path.keys[...]) { _ in tree }
    }

    /// A tree without the value at `path` (its descendants stay).
    public func removing(_ path: TreePath) -> ImmutableTree {
        updating(path.keys[...]) { ImmutableTree(value: nil, children: $0.children) }
    }

    private func updating(_ keys: ArraySlice<ChildKey>, _ transform: (ImmutableTree) -> ImmutableTree) -> ImmutableTree {
        guard let first = keys.first else { return transform(self) }
        let child = (children[first] ?? .empty).updating(keys.dropFirst(), transform)
        var copy = self
        copy.children = child.isEmpty ? children.removing(first) : children.inserting(first, child)
        return copy
    }

    /// The value closest to the root on `path` satisfying `predicate`, with its path.
    public func rootmostValue(on path: TreePath, where predicate: (Value) -> Bool = { _ in true }) -> (path: TreePath, value: Value)? {
        var tree = self
        var depth = 0
        while true {
            if let value = tree.value, predicate(value) {
                return (TreePath(keys: Array(path.keys.prefix(depth))), value)
            }
            guard depth < path.depth, let child = tree.children[path.keys[depth]] else { return nil }
            tree = child
            depth += 1
        }
    }

    /// Calls `body` with each value on `path`, from the root down, with its path; stops early when
    /// `body` returns `false`. Returns whether the walk reached the end.
    @discardableResult
    public func forEachOnPath(_ path: TreePath, _ body: (TreePath, Value) -> Bool) -> Bool {
        var tree = self
        var depth = 0
        while true {
            if let value = tree.value, !body(TreePath(keys: Array(path.keys.prefix(depth))), value) { return false }
            guard depth < path.depth, let child = tree.children[path.keys[depth]] else { return true }
            tree = child
            depth += 1
        }
    }

    /// Calls `body` with every value and its path, parents before children, in key order.
    public func forEach(_ body: (TreePath, Value) -> Void) {
        forEach(prefix: [], body)
    }

    private func forEach(prefix: [ChildKey], _ body: (TreePath, Value) -> Void) {
        if let value { body(TreePath(keys: prefix), value) }
        for (key, child) in children { child.forEach(prefix: prefix + [key], body) }
    }

    /// Folds the tree bottom-up: `combine` gets each node's path, value and its children's results.
    public func fold<Result>(_ combine: (TreePath, Value?, [(ChildKey, Result)]) -> Result) -> Result {
        fold(prefix: [], combine)
    }

    private func fold<Result>(prefix: [ChildKey], _ combine: (TreePath, Value?, [(ChildKey, Result)]) -> Result) -> Result {
        let childResults = children.map { ($0.key, $0.value.fold(prefix: prefix + [$0.key], combine)) }
        return combine(TreePath(keys: prefix), value, childResults)
    }
}

extension ImmutableTree: Sendable where Value: Sendable {}
