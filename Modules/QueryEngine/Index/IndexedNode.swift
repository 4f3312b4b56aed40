public import CoreTree

/// A node together with its children ordered by a ``QueryIndex``.
///
/// Key order comes free from the node itself; for other orders a second persistent map is kept
/// beside the node and updated child by child, so a change to one child of a large location costs
/// O(log n), not a re-sort.
public struct IndexedNode: Sendable {
    /// The data.
    public let node: Node
    /// The order used for the children.
    public let index: QueryIndex
    /// The children by index position; `nil` when index order is key order.
    let ordered: SortedMap<IndexKey, Node>?

    /// Indexes `node` by `index`.
    ///
    /// - Complexity: O(1) for the key index, O(n) for the priority index when no child has a
    ///   priority, O(n log n) otherwise.
    public init(_ node: Node, index: QueryIndex) {
        self.node = node
        self.index = index
        self.ordered = IndexedNode.buildOrdered(node, index)
    }

    init(node: Node, index: QueryIndex, ordered: SortedMap<IndexKey, Node>?) {
        self.node = node
        self.index = index
        self.ordered = ordered
    }

    private static func buildOrdered(_ node: Node, _ index: QueryIndex) -> SortedMap<IndexKey, Node>? {
        switch index {
        case .key:
            return nil
        case .priority:
            if !node.children.contains(where: { $0.value.priority != nil }) { return nil }
        case .value, .child:
            break
        }
        // Children come in key order, so sorting plain numbers with the position as the tie
        // breaker gives index order without copying a single node.
        let children = Array(node.children)
        var scalarKeys: [ScalarSortKey] = []
        scalarKeys.reserveCapacity(children.count)
        for (position, child) in children.enumerated() {
            guard let scalar = ScalarSortKey(index.key(name: child.key, node: child.value).value, position: position) else {
                return SortedMap(children.map { (key: index.key(name: $0.key, node: $0.value), value: $0.value) })
            }
            scalarKeys.append(scalar)
        }
        scalarKeys.sort()
        return SortedMap(sortedUniqueCount: scalarKeys.count) { rank in
            let child = children[scalarKeys[rank].position]
            return (key: index.key(name: child.key, node: child.value), value: child.value)
        }
    }

    /// The number of children.
    public var count: Int { node.childCount }

    /// The first child in index order.
    public var firstChild: NamedNode? {
        if let ordered { return ordered.first.map { NamedNode(name: $0.key.name, node: $0.value) } }
        return node.children.first.map { NamedNode(name: $0.key, node: $0.value) }
    }

    /// The last child in index order.
    public var lastChild: NamedNode? {
        if let ordered { return ordered.last.map { NamedNode(name: $0.key.name, node: $0.value) } }
        return node.children.last.map { NamedNode(name: $0.key, node: $0.value) }
    }

    /// The key of the child just before `name` (holding `child`) in index order.
    public func predecessor(of name: ChildKey, child: Node) -> ChildKey? {
        if let ordered { return ordered.predecessor(of: index.key(name: name, node: child))?.key.name }
        return node.children.predecessor(of: name)?.key
    }

    /// The children in index order.
    public var children: [NamedNode] {
        if let ordered { return ordered.map { NamedNode(name: $0.key.name, node: $0.value) } }
        return node.children.map { NamedNode(name: $0.key, node: $0.value) }
    }

    /// The children in reverse index order.
    public var reversedChildren: [NamedNode] {
        if let ordered { return ordered.reversedElements().map { NamedNode(name: $0.key.name, node: $0.value) } }
        return node.children.reversedElements().map { NamedNode(name: $0.key, node: $0.value) }
    }

    /// Calls `body` with the children in index order (reversed on request) starting at the first
    /// child at or after `start` (at or before when reversed), until `body` returns `false`.
    public func forEachChild(from start: IndexKey?, reversed: Bool = false, _ body: (NamedNode) -> Bool) {
        if let ordered {
            let sequence: IteratorSequence<SortedMap<IndexKey, Node>.Iterator>
            switch (start, reversed) {
            case (nil, false): sequence = IteratorSequence(ordered.makeIterator())
            case (nil, true): sequence = ordered.reversedElements()
            case (let start?, false): sequence = ordered.elements(from: start)
            case (let start?, true): sequence = ordered.reversedElements(from: start)
            }
            for element in sequence where !body(NamedNode(name: element.key.name, node: element.value)) { return }
            return
        }
        let children = node.children
        let sequence: IteratorSequence<SortedMap<ChildKey, Node>.Iterator>
        switch (start, reversed) {
        case (nil, false): sequence = IteratorSequence(children.makeIterator())
        case (nil, true): sequence = children.reversedElements()
        case (let start?, false):
            sequence = children.elements(from: IndexedNode.keyOrderStart(start))
        case (let start?, true):
            sequence = children.reversedElements(from: IndexedNode.keyOrderStart(start))
        }
        for element in sequence where !body(NamedNode(name: element.key, node: element.value)) { return }
    }

    /// Where a position falls in key order, for orders that coincide with key order.
    private static func keyOrderStart(_ position: IndexKey) -> ChildKey {
        switch position.value {
        case .min: return .min
        case .max: return .max
        case .node(let value):
            // Without a separate order every child's index value is empty (key index, or the
            // priority index with no priorities), so a bound with a real value lies after them all.
            return value.isEmpty ? position.name : .max
        }
    }

    /// The same data with the child `name` replaced by `child` (removed when empty).
    ///
    /// - Parameters:
    ///   - oldChild: the child's current data when the caller already has it, saving a lookup.
    ///   - shared: work shared with other views applying the same operation.
    /// - Complexity: O(log n).
    func updatingImmediateChild(_ name: ChildKey, to child: Node, oldChild: Node? = nil, shared: SharedUpdates?) -> IndexedNode {
        if name.isPriorityKey {
            return IndexedNode(node: node.updatingImmediateChild(name, to: child), index: index, ordered: ordered)
        }
        let newNode = shared?.updatingImmediateChild(of: node, name, to: child) ?? node.updatingImmediateChild(name, to: child)
        guard let ordered else {
            if case .priority = index, child.priority != nil {
                return IndexedNode(newNode, index: index)
            }
            return IndexedNode(node: newNode, index: index, ordered: nil)
        }
        let oldChild = oldChild ?? shared?.immediateChild(of: node, name) ?? node.immediateChild(name)
        let reorder = { [index] () -> SortedMap<IndexKey, Node> in
            var reordered = ordered
            if !oldChild.isEmpty { reordered = reordered.removing(index.key(name: name, node: oldChild)) }
            if !child.isEmpty { reordered = reordered.inserting(index.key(name: name, node: child), child) }
            return reordered
        }
        let newOrdered = shared?.updatingOrder(ordered, index: index, name: name, from: oldChild, to: child, reorder) ?? reorder()
        return IndexedNode(node: newNode, index: index, ordered: newOrdered)
    }

    /// The same data with the child `name` replaced by `child` (removed when empty).
    ///
    /// - Complexity: O(log n).
    public func updatingImmediateChild(_ name: ChildKey, to child: Node) -> IndexedNode {
        updatingImmediateChild(name, to: child, shared: nil)
    }

    /// The same data with another priority.
    public func updatingPriority(_ priority: Priority?) -> IndexedNode {
        IndexedNode(node: node.withPriority(priority), index: index, ordered: ordered)
    }

    /// Whether both hold the same data (the order follows from it).
    public func hasSameData(as other: IndexedNode) -> Bool { node == other.node }
}

/// An index value that is not a string, as plain numbers: its rank among value types, a number
/// standing for it within the rank, and the child's position in key order to break ties. Sorting
/// these orders children as ``IndexKey`` does, without reference counting.
private struct ScalarSortKey: Comparable {
    let rank: Int
    let number: Double
    let position: Int

    /// Nil for strings and sentinels, which only ``IndexKey`` orders.
    init?(_ value: IndexKey.Value, position: Int) {
        guard case .node(let node) = value else { return nil }
        self.position = position
        switch node.leafValue {
        case nil:
            rank = IndexKey.rank(node)
            number = 0
        case .bool(let flag)?:
            rank = IndexKey.rank(node)
            number = flag ? 1 : 0
        case .number(let value)?:
            rank = IndexKey.rank(node)
            number = value
        case .string?:
            return nil
        }
    }

    static func < (lhs: ScalarSortKey, rhs: ScalarSortKey) -> Bool {
        if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
        if lhs.number != rhs.number { return lhs.number < rhs.number }
        return lhs.position < rhs.position
    }
}
