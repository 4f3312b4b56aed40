extension Node {
    /// The child named `key`: the empty node when absent, the priority as a leaf for `.priority`.
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func immediateChild(_ key: ChildKey) -> Node {
        if key.isPriorityKey { return priority?.node ?? .empty }
        return children[key] ?? .empty
    }

    /// The node at `path` below this one (the empty node when nothing is there).
    ///
    /// - Complexity: O(depth × log n).
    @inlinable
    public func child(at path: TreePath) -> Node {
        var node = self
        for key in path.keys {
            if node.isEmpty { return node }
            node = node.immediateChild(key)
        }
        return node
    }

    /// Whether a non-empty child named `key` exists. - Complexity: O(log n).
    @inlinable
    public func hasChild(_ key: ChildKey) -> Bool { !immediateChild(key).isEmpty }

    /// A node with the child `key` replaced by `child` (removed when `child` is empty).
    ///
    /// Writing a child into a leaf replaces the leaf with a children node that keeps the leaf's
    /// priority; writing `.priority` sets the priority. Removing the last child gives ``empty``.
    ///
    /// - Complexity: O(log n); the result shares every other child with `self`.
    public func updatingImmediateChild(_ key: ChildKey, to child: Node) -> Node {
        if key.isPriorityKey {
            return withPriority(child.priorityValueForPriorityKey)
        }
        switch storage {
        case .empty, .leaf, .prioritizedLeaf:
            if child.isEmpty { return self }
            return Node(nonEmptyChildren: SortedMap().inserting(key, child), priority: priority)
        case .children(let map):
            let updated = child.isEmpty ? map.removing(key) : map.inserting(key, child)
            return Node(nonEmptyChildren: updated, priority: nil)
        case .prioritizedChildren(let box):
            let updated = child.isEmpty ? box.children.removing(key) : box.children.inserting(key, child)
            return Node(nonEmptyChildren: updated, priority: box.priority)
        }
    }

    /// Replaces the child `key` by `child` in place (removes it when `child` is empty).
    ///
    /// Same result as ``updatingImmediateChild(_:to:)``, but when this node's children are not
    /// shared with another node they are updated without copying the path.
    ///
    /// - Complexity: O(log n).
    public mutating func updateImmediateChild(_ key: ChildKey, to child: Node) {
        guard case .children(var map) = storage, !key.isPriorityKey else {
            self = updatingImmediateChild(key, to: child)
            return
        }
        storage = .empty  // drop this node's reference so `map` can be uniquely referenced
        if child.isEmpty { map.remove(key) } else { map.insert(key, child) }
        self = Node(nonEmptyChildren: map, priority: nil)
    }

    /// A node with the node at `path` replaced by `node`; an empty `path` replaces `self`.
    ///
    /// - Complexity: O(depth × log n).
    public func updatingChild(at path: TreePath, to node: Node) -> Node {
        updatingChild(path.keys[...], to: node)
    }

    private func updatingChild(_ keys: ArraySlice<ChildKey>, to node: Node) -> Node {
        guard let first = keys.first else { return node }
        if first.isPriorityKey {
            // Only a trailing `.priority` means the priority; deeper paths below it hold nothing.
            return keys.count == 1 ? updatingImmediateChild(first, to: node) : self
        }
        let current = immediateChild(first)
        return updatingImmediateChild(first, to: current.updatingChild(keys.dropFirst(), to: node))
    }

    /// The priority a node denotes when written to a `.priority` key: a number or string leaf, else none.
    @usableFromInline
    var priorityValueForPriorityKey: Priority? {
        switch leafValue {
        case .number(let value)?: .number(value)
        case .string(let value)?: .string(value)
        default: nil
        }
    }

    /// The key of the first child in key order. - Complexity: O(log n).
    public var firstChildKey: ChildKey? { children.first?.key }
    /// The key of the last child in key order. - Complexity: O(log n).
    public var lastChildKey: ChildKey? { children.last?.key }

    /// The key of the child just before `key` in key order (the previous sibling). - Complexity: O(log n).
    public func predecessorChildKey(of key: ChildKey) -> ChildKey? { children.predecessor(of: key)?.key }
    /// The key of the child just after `key` in key order. - Complexity: O(log n).
    public func successorChildKey(of key: ChildKey) -> ChildKey? { children.successor(of: key)?.key }
}
