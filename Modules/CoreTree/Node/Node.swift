/// An immutable JSON tree with Firebase Realtime Database semantics.
///
/// A node is empty (null), a leaf (bool, number or string) or a set of named children kept in
/// key order. Leaves and children nodes may carry a ``Priority``; an empty node never does. A
/// children node never holds an empty child: writing null to a child removes it, and removing the
/// last child makes the node empty.
///
/// Children live in a persistent ``SortedMap``, so copying a node is O(1) and replacing a child
/// deep in the tree costs O(depth × log n) while sharing everything else.
public struct Node: Sendable {
    @usableFromInline
    enum Storage: Sendable {
        case empty
        case leaf(LeafValue)
        case prioritizedLeaf(PrioritizedLeaf)
        case children(SortedMap<ChildKey, Node>)
        case prioritizedChildren(PrioritizedChildren)
    }

    @usableFromInline
    final class PrioritizedLeaf: Sendable {
        @usableFromInline let value: LeafValue
        @usableFromInline let priority: Priority
        @inlinable init(_ value: LeafValue, _ priority: Priority) {
            self.value = value
            self.priority = priority
        }
    }

    @usableFromInline
    final class PrioritizedChildren: Sendable {
        @usableFromInline let children: SortedMap<ChildKey, Node>
        @usableFromInline let priority: Priority
        @inlinable init(_ children: SortedMap<ChildKey, Node>, _ priority: Priority) {
            self.children = children
            self.priority = priority
        }
    }

    @usableFromInline var storage: Storage

    @inlinable init(storage: Storage) { self.storage = storage }

    /// The empty node (JSON `null`).
    public static let empty = Node(storage: .empty)

    /// A leaf holding `value`, with an optional priority.
    @inlinable
    public init(_ value: LeafValue, priority: Priority? = nil) {
        if let priority {
            storage = .prioritizedLeaf(PrioritizedLeaf(value, priority))
        } else {
            storage = .leaf(value)
        }
    }

    /// A children node; empty children are dropped, and no children at all gives ``empty``.
    ///
    /// - Complexity: O(n) to check for empty children, plus O(n log n) to drop any found.
    public init(children: SortedMap<ChildKey, Node>, priority: Priority? = nil) {
        var children = children
        if children.contains(where: { $0.value.isEmpty }) {
            children = SortedMap(children.filter { !$0.value.isEmpty })
        }
        self.init(nonEmptyChildren: children, priority: priority)
    }

    /// A children node from a map known to hold no empty child.
    @inlinable
    init(nonEmptyChildren children: SortedMap<ChildKey, Node>, priority: Priority?) {
        if children.isEmpty {
            storage = .empty
        } else if let priority {
            storage = .prioritizedChildren(PrioritizedChildren(children, priority))
        } else {
            storage = .children(children)
        }
    }

    /// A children node from key/value pairs; when a key repeats the last wins, empty values are dropped.
    public init(children pairs: some Sequence<(key: ChildKey, value: Node)>, priority: Priority? = nil) {
        self.init(children: SortedMap(pairs.lazy.filter { !$0.value.isEmpty }), priority: priority)
    }

    /// Whether this is the empty node (null).
    @inlinable
    public var isEmpty: Bool {
        if case .empty = storage { return true }
        return false
    }

    /// Whether this is a leaf (bool, number or string).
    @inlinable
    public var isLeaf: Bool {
        switch storage {
        case .leaf, .prioritizedLeaf: true
        default: false
        }
    }

    /// The leaf's value, or `nil` for an empty or children node.
    @inlinable
    public var leafValue: LeafValue? {
        switch storage {
        case .leaf(let value): value
        case .prioritizedLeaf(let box): box.value
        default: nil
        }
    }

    /// The node's priority, or `nil`.
    @inlinable
    public var priority: Priority? {
        switch storage {
        case .prioritizedLeaf(let box): box.priority
        case .prioritizedChildren(let box): box.priority
        default: nil
        }
    }

    /// The children in key order; empty for leaves and the empty node.
    @inlinable
    public var children: SortedMap<ChildKey, Node> {
        switch storage {
        case .children(let map): map
        case .prioritizedChildren(let box): box.children
        default: SortedMap()
        }
    }

    /// The number of children (0 for leaves). - Complexity: O(1).
    @inlinable
    public var childCount: Int { children.count }

    /// The same node with another priority; the empty node ignores priorities.
    public func withPriority(_ priority: Priority?) -> Node {
        switch storage {
        case .empty:
            return self
        case .leaf(let value):
            return Node(value, priority: priority)
        case .prioritizedLeaf(let box):
            return Node(box.value, priority: priority)
        case .children(let map):
            return Node(nonEmptyChildren: map, priority: priority)
        case .prioritizedChildren(let box):
            return Node(nonEmptyChildren: box.children, priority: priority)
        }
    }

    /// The same node with no priority at any depth.
    public func strippingPriorities() -> Node {
        switch storage {
        case .empty, .leaf: return self
        case .prioritizedLeaf(let box): return Node(box.value)
        case .children, .prioritizedChildren:
            var map = SortedMap<ChildKey, Node>()
            for (key, child) in children { map = map.inserting(key, child.strippingPriorities()) }
            return Node(nonEmptyChildren: map, priority: nil)
        }
    }
}

extension Node: Equatable {
    /// Structural equality: same kind, same value or children, same priority.
    public static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.empty, .empty): return true
        case (.leaf(let a), .leaf(let b)): return a == b
        case (.prioritizedLeaf(let a), .prioritizedLeaf(let b)):
            return a === b || (a.value == b.value && a.priority == b.priority)
        case (.children(let a), .children(let b)): return a == b
        case (.prioritizedChildren(let a), .prioritizedChildren(let b)):
            return a === b || (a.priority == b.priority && a.children == b.children)
        default: return false
        }
    }
}

extension Node: CustomStringConvertible {
    /// The node as compact JSON in export format (with `.priority`).
    public var description: String { jsonString(format: .export) }
}

extension Node: Hashable {
    /// Hashes the structure that ``==`` compares.
    ///
    /// - Complexity: O(n) over the subtree.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(leafValue)
        hasher.combine(priority)
        hasher.combine(childCount)
        for (key, child) in children {
            hasher.combine(key)
            child.hash(into: &hasher)
        }
    }
}
