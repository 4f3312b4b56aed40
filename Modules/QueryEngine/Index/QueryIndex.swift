public import CoreTree

/// What a query orders children by.
public enum QueryIndex: Sendable, Hashable, CustomStringConvertible {
    /// By priority, then key (the default order).
    case priority
    /// By key.
    case key
    /// By the child's own value, then key.
    case value
    /// By the value at a path below each child, then key.
    case child(TreePath)

    /// The value a child is ordered by under this index (the empty node when it has none).
    @inlinable
    public func indexValue(of node: Node) -> Node {
        switch self {
        case .priority: node.priority?.node ?? .empty
        case .key: .empty
        case .value: node
        case .child(let path): node.child(at: path)
        }
    }

    /// Whether `node` has a value for this index (children without one sort first).
    public func isDefined(on node: Node) -> Bool {
        switch self {
        case .priority: node.priority != nil
        case .key, .value: true
        case .child(let path): !node.child(at: path).isEmpty
        }
    }

    /// Whether replacing `old` by `new` can move the child in this index's order.
    public func indexedValueChanged(old: Node, new: Node) -> Bool {
        switch self {
        case .priority: old.priority != new.priority
        case .key: false
        case .value: old != new
        case .child(let path): old.child(at: path) != new.child(at: path)
        }
    }

    /// The position of a named child in this index's order.
    @inlinable
    public func key(for child: NamedNode) -> IndexKey {
        IndexKey(value: .node(indexValue(of: child.node)), name: child.name)
    }

    /// The position of a named child in this index's order.
    @inlinable
    public func key(name: ChildKey, node: Node) -> IndexKey {
        IndexKey(value: .node(indexValue(of: node)), name: name)
    }

    /// Three-way comparison of two children in this index's order.
    @inlinable
    public func compare(_ lhs: NamedNode, _ rhs: NamedNode) -> Int {
        if case .key = self { return ChildKey.compare(lhs.name, rhs.name) }
        return IndexKey.compare(key(for: lhs), key(for: rhs))
    }

    /// The position a query bound denotes: `startAt(value, name)` and its relatives.
    ///
    /// On the key index the bound's value is the key itself.
    public func position(value: Node, name: ChildKey) -> IndexKey {
        switch self {
        case .key:
            if case .string(let string)? = value.leafValue { return IndexKey(value: .node(.empty), name: ChildKey(string)) }
            return IndexKey(value: .node(.empty), name: name)
        default:
            return IndexKey(value: .node(value), name: name)
        }
    }

    /// A position before every child.
    public var minPosition: IndexKey { IndexKey(value: .min, name: .min) }
    /// A position after every child.
    public var maxPosition: IndexKey { IndexKey(value: .max, name: .max) }

    /// The index's name on the wire (`i`): `.key`, `.value`, a child path, or `nil` for priority.
    public var wireName: String? {
        switch self {
        case .priority: nil
        case .key: ".key"
        case .value: ".value"
        case .child(let path): path.relativeForm
        }
    }

    /// The index for a wire name, the inverse of ``wireName``.
    public init(wireName: String?) {
        switch wireName {
        case nil, ".priority": self = .priority
        case ".key": self = .key
        case ".value": self = .value
        case let path?: self = .child(TreePath(unchecked: path))
        }
    }

    public var description: String { wireName ?? ".priority" }
}

/// A child's name with its data.
public struct NamedNode: Sendable, Equatable {
    /// The child's key.
    public var name: ChildKey
    /// The child's data.
    public var node: Node

    /// Creates a named node.
    @inlinable
    public init(name: ChildKey, node: Node) {
        self.name = name
        self.node = node
    }
}
