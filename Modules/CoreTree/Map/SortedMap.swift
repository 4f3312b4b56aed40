/// An immutable sorted map with structural sharing: every update returns a new map that shares all
/// untouched nodes with the old one, so copies are free and updates cost O(log n).
///
/// The map is a weight-balanced binary search tree (Adams' tree, delta 3, ratio 2). Each node keeps
/// the size of its subtree, which also makes positional access (``element(at:)``,
/// ``index(of:)``) O(log n): query windows such as "the last 100 children" use it.
public struct SortedMap<Key: ThreeWayComparable, Value> {
    @usableFromInline
    final class TreeNode: @unchecked Sendable {
        // Mutated only while uniquely referenced (copy-on-write, as Array does), so a node that
        // two maps, or two threads, can see never changes.
        @usableFromInline let key: Key
        @exclusivity(unchecked) @usableFromInline var value: Value
        @exclusivity(unchecked) @usableFromInline var left: TreeNode?
        @exclusivity(unchecked) @usableFromInline var right: TreeNode?
        @exclusivity(unchecked) @usableFromInline var size: Int

        @inlinable
        init(key: Key, value: Value, left: TreeNode?, right: TreeNode?) {
            self.key = key
            self.value = value
            self.left = left
            self.right = right
            self.size = (left?.size ?? 0) + (right?.size ?? 0) + 1
        }
    }

    @usableFromInline var root: TreeNode?

    @inlinable
    init(root: TreeNode?) { self.root = root }

    /// An empty map.
    @inlinable
    public init() { root = nil }

    /// Builds a perfectly balanced map from elements already sorted by key with no duplicates.
    ///
    /// - Complexity: O(n).
    @inlinable
    public init(sortedUniqueElements elements: some Collection<(key: Key, value: Value)>) {
        let array = Array(elements)
        root = array.withUnsafeBufferPointer { SortedMap.build($0, 0, $0.count) }
    }

    /// Builds a perfectly balanced map of `count` elements, asking `element` for each position
    /// (its keys ascending, no duplicates) without gathering them in an array first.
    ///
    /// - Complexity: O(n).
    @inlinable
    public init(sortedUniqueCount count: Int, element: (Int) -> (key: Key, value: Value)) {
        root = SortedMap.build(count: count, element, 0, count)
    }

    @inlinable
    static func build(count: Int, _ element: (Int) -> (key: Key, value: Value), _ lower: Int, _ upper: Int) -> TreeNode? {
        if lower >= upper { return nil }
        let middle = (lower + upper) / 2
        // In order: the left subtree's positions come first, then the middle's.
        let left = build(count: count, element, lower, middle)
        let (key, value) = element(middle)
        return TreeNode(key: key, value: value, left: left, right: build(count: count, element, middle + 1, upper))
    }

    @inlinable
    static func build(_ elements: UnsafeBufferPointer<(key: Key, value: Value)>, _ lower: Int, _ upper: Int) -> TreeNode? {
        if lower >= upper { return nil }
        let middle = (lower + upper) / 2
        return TreeNode(
            key: elements[middle].key, value: elements[middle].value,
            left: build(elements, lower, middle), right: build(elements, middle + 1, upper))
    }

    /// Builds a map from arbitrary elements; when a key repeats, the last value wins.
    ///
    /// - Complexity: O(n log n), O(n) when the elements are already sorted.
    @inlinable
    public init(_ elements: some Sequence<(key: Key, value: Value)>) {
        var array = Array(elements)
        var sorted = true
        var index = 1
        while index < array.count {
            if Key.compare(array[index - 1].key, array[index].key) >= 0 { sorted = false; break }
            index += 1
        }
        if !sorted {
            // Sort positions, not elements: moving an element copies its key and value (reference
            // counting each), moving an Int does not. Ties go to position, so the last one wins.
            var order = Array(0..<array.count)
            array.withUnsafeBufferPointer { elements in
                order.withUnsafeMutableBufferPointer { positions in
                    positions.sort { a, b in
                        let comparison = Key.compare(elements[a].key, elements[b].key)
                        return comparison != 0 ? comparison < 0 : a < b
                    }
                }
            }
            var unique: [(key: Key, value: Value)] = []
            unique.reserveCapacity(array.count)
            array.withUnsafeBufferPointer { elements in
                for position in order {
                    if let last = unique.last, Key.compare(last.key, elements[position].key) == 0 {
                        unique[unique.count - 1] = elements[position]
                    } else {
                        unique.append(elements[position])
                    }
                }
            }
            array = unique
        }
        self.init(sortedUniqueElements: array)
    }

    /// The number of elements. - Complexity: O(1).
    @inlinable public var count: Int { root?.size ?? 0 }

    /// Whether the map has no elements. - Complexity: O(1).
    @inlinable public var isEmpty: Bool { root == nil }

    /// The value stored for `key`, or `nil`.
    ///
    /// - Complexity: O(log n).
    @inlinable
    public subscript(key: Key) -> Value? {
        guard let root else { return nil }
        // The map keeps every node alive while it is read here, so the walk holds unretained
        // references (retain/release of each node passed dominated lookups in profiles).
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root)
            while true {
                let (order, next) = node._withUnsafeGuaranteedRef { current in
                    let order = Key.compare(key, current.key)
                    return (order, order < 0 ? SortedMap.unretained(current.left) : SortedMap.unretained(current.right))
                }
                if order == 0 { return node._withUnsafeGuaranteedRef { $0.value } }
                guard let next else { return nil }
                node = next
            }
        }
    }

    /// `node` as an unretained reference, for walks over a map that keeps it alive.
    @inlinable @inline(__always)
    static func unretained(_ node: TreeNode?) -> Unmanaged<TreeNode>? {
        guard let node else { return nil }
        return Unmanaged.passUnretained(node)
    }

    /// Whether `key` is present. - Complexity: O(log n).
    @inlinable
    public func contains(_ key: Key) -> Bool { self[key] != nil }

    /// A map with `value` stored for `key`, replacing any previous value.
    ///
    /// - Complexity: O(log n); the result shares all other nodes with `self`.
    @inlinable
    public func inserting(_ key: Key, _ value: Value) -> SortedMap {
        SortedMap(root: SortedMap.insert(key, value, into: root))
    }

    /// Stores `value` for `key` in place, copying only the nodes this map shares with others.
    ///
    /// - Complexity: O(log n); no allocation on the path when the map is uniquely referenced and
    ///   the key exists.
    @inlinable
    public mutating func insert(_ key: Key, _ value: Value) {
        let node = root
        root = nil
        root = SortedMap.insertInPlace(key, value, consume node)
    }

    /// Removes `key`, replacing this map's root with a path-copied tree (the same work as
    /// ``removing(_:)``; unlike ``insert(_:_:)``, removal does not yet reuse unshared nodes).
    ///
    /// - Complexity: O(log n).
    @inlinable
    public mutating func remove(_ key: Key) {
        guard let current = root, case .removed(let newRoot) = SortedMap.remove(key, from: current) else { return }
        root = newRoot
    }

    /// A map without `key`; `self` when the key is absent.
    ///
    /// - Complexity: O(log n); the result shares all other nodes with `self`.
    @inlinable
    public func removing(_ key: Key) -> SortedMap {
        guard let root else { return self }
        guard case .removed(let newRoot) = SortedMap.remove(key, from: root) else { return self }
        return SortedMap(root: newRoot)
    }

    /// The element with the smallest key. - Complexity: O(log n).
    @inlinable
    public var first: (key: Key, value: Value)? {
        guard var node = root else { return nil }
        while let left = node.left { node = left }
        return (node.key, node.value)
    }

    /// The element with the largest key. - Complexity: O(log n).
    @inlinable
    public var last: (key: Key, value: Value)? {
        guard var node = root else { return nil }
        while let right = node.right { node = right }
        return (node.key, node.value)
    }

    /// The element with the largest key smaller than `key` (`key` need not be present).
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func predecessor(of key: Key) -> (key: Key, value: Value)? {
        bound(of: key, below: true)
    }

    /// The element with the smallest key larger than `key` (`key` need not be present).
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func successor(of key: Key) -> (key: Key, value: Value)? {
        bound(of: key, below: false)
    }

    /// The closest element strictly below (or above) `key`, walked without retaining nodes.
    @inlinable
    func bound(of key: Key, below: Bool) -> (key: Key, value: Value)? {
        guard let root else { return nil }
        return withExtendedLifetime(root) { () -> (key: Key, value: Value)? in
            var node: Unmanaged<TreeNode>? = Unmanaged.passUnretained(root)
            var best: Unmanaged<TreeNode>?
            while let current = node {
                node = current._withUnsafeGuaranteedRef { current in
                    let order = Key.compare(current.key, key)
                    if below ? order < 0 : order > 0 {
                        best = Unmanaged.passUnretained(current)
                        return SortedMap.unretained(below ? current.right : current.left)
                    }
                    return SortedMap.unretained(below ? current.left : current.right)
                }
            }
            return best?._withUnsafeGuaranteedRef { ($0.key, $0.value) }
        }
    }

    /// The element at a position in key order (0 is the smallest key).
    ///
    /// - Precondition: `0 <= index < count`.
    /// - Complexity: O(log n).
    @inlinable
    public func element(at index: Int) -> (key: Key, value: Value) {
        precondition(index >= 0 && index < count, "SortedMap index \(index) out of range 0..<\(count)")
        return withExtendedLifetime(root) {
            var node = Unmanaged.passUnretained(root!)
            var remaining = index
            while true {
                let next = node._withUnsafeGuaranteedRef { current -> Unmanaged<TreeNode>? in
                    let leftSize = current.left?.size ?? 0
                    if remaining < leftSize { return SortedMap.unretained(current.left) }
                    if remaining == leftSize { return nil }
                    remaining -= leftSize + 1
                    return SortedMap.unretained(current.right)
                }
                guard let next else { return node._withUnsafeGuaranteedRef { ($0.key, $0.value) } }
                node = next
            }
        }
    }

    /// The number of keys smaller than `key`: its position if present, else where it would go.
    ///
    /// - Complexity: O(log n).
    @inlinable
    public func index(of key: Key) -> Int {
        guard let root else { return 0 }
        return withExtendedLifetime(root) {
            var node: Unmanaged<TreeNode>? = Unmanaged.passUnretained(root)
            var rank = 0
            while let current = node {
                node = current._withUnsafeGuaranteedRef { current in
                    let order = Key.compare(key, current.key)
                    let leftSize = current.left?.size ?? 0
                    if order == 0 {
                        rank += leftSize
                        return nil
                    }
                    if order < 0 { return SortedMap.unretained(current.left) }
                    rank += leftSize + 1
                    return SortedMap.unretained(current.right)
                }
            }
            return rank
        }
    }
}

// @unchecked: its nodes are immutable once shared (see TreeNode), so sendable keys and values suffice.
extension SortedMap: @unchecked Sendable where Key: Sendable, Value: Sendable {}

// MARK: - Balancing

extension SortedMap {
    @usableFromInline static var delta: Int { 3 }
    @usableFromInline static var ratio: Int { 2 }

    @inlinable
    static func size(_ node: TreeNode?) -> Int { node?.size ?? 0 }

    @inlinable
    static func insert(_ key: Key, _ value: Value, into node: TreeNode?) -> TreeNode {
        insert(key, value, below: unretained(node))
    }

    /// Path-copying insertion into a subtree reached by an unretained walk.
    @inlinable
    static func insert(_ key: Key, _ value: Value, below subtree: Unmanaged<TreeNode>?) -> TreeNode {
        guard let subtree else { return TreeNode(key: key, value: value, left: nil, right: nil) }
        return subtree._withUnsafeGuaranteedRef { node in
            let order = Key.compare(key, node.key)
            if order == 0 {
                return TreeNode(key: key, value: value, left: node.left, right: node.right)
            } else if order < 0 {
                return balance(node.key, node.value, insert(key, value, below: unretained(node.left)), node.right)
            } else {
                return balance(node.key, node.value, node.left, insert(key, value, below: unretained(node.right)))
            }
        }
    }

    @usableFromInline
    enum Removal {
        case notFound
        case removed(TreeNode?)
    }

    /// Inserts into a subtree whose reference the caller handed over, mutating nodes it owns alone.
    @inlinable
    static func insertInPlace(_ key: Key, _ value: Value, _ subtree: consuming TreeNode?) -> TreeNode {
        guard var node = consume subtree else { return TreeNode(key: key, value: value, left: nil, right: nil) }
        guard isKnownUniquelyReferenced(&node) else { return insert(key, value, into: node) }
        let order = Key.compare(key, node.key)
        if order == 0 {
            node.value = value
            return node
        }
        if order < 0 {
            let left = node.left
            node.left = nil
            node.left = insertInPlace(key, value, consume left)
        } else {
            let right = node.right
            node.right = nil
            node.right = insertInPlace(key, value, consume right)
        }
        let leftSize = size(node.left)
        let rightSize = size(node.right)
        if leftSize + rightSize > 1 && (rightSize > delta * leftSize || leftSize > delta * rightSize) {
            return balance(node.key, node.value, node.left, node.right)
        }
        node.size = leftSize + rightSize + 1
        return node
    }

    /// Removes `key` from the subtree, reporting whether it was there and the new subtree.
    @inlinable
    static func remove(_ key: Key, from node: TreeNode) -> Removal {
        remove(key, below: Unmanaged.passUnretained(node))
    }

    /// Path-copying removal from a subtree reached by an unretained walk.
    @inlinable
    static func remove(_ key: Key, below subtree: Unmanaged<TreeNode>) -> Removal {
        subtree._withUnsafeGuaranteedRef { node in
            let order = Key.compare(key, node.key)
            if order == 0 {
                return .removed(glue(node.left, node.right))
            } else if order < 0 {
                guard let left = unretained(node.left), case .removed(let newLeft) = remove(key, below: left) else { return .notFound }
                return .removed(balance(node.key, node.value, newLeft, node.right))
            } else {
                guard let right = unretained(node.right), case .removed(let newRight) = remove(key, below: right) else { return .notFound }
                return .removed(balance(node.key, node.value, node.left, newRight))
            }
        }
    }

    /// Joins two subtrees whose keys are all ordered left before right, and whose sizes were balanced.
    @inlinable
    static func glue(_ left: TreeNode?, _ right: TreeNode?) -> TreeNode? {
        guard let left else { return right }
        guard let right else { return left }
        if left.size > right.size {
            let (maxKey, maxValue, rest) = removeMax(left)
            return balance(maxKey, maxValue, rest, right)
        } else {
            let (minKey, minValue, rest) = removeMin(right)
            return balance(minKey, minValue, left, rest)
        }
    }

    @inlinable
    static func removeMin(_ node: TreeNode) -> (Key, Value, TreeNode?) {
        guard let left = node.left else { return (node.key, node.value, node.right) }
        let (key, value, rest) = removeMin(left)
        return (key, value, balance(node.key, node.value, rest, node.right))
    }

    @inlinable
    static func removeMax(_ node: TreeNode) -> (Key, Value, TreeNode?) {
        guard let right = node.right else { return (node.key, node.value, node.left) }
        let (key, value, rest) = removeMax(right)
        return (key, value, balance(node.key, node.value, node.left, rest))
    }

    @inlinable
    static func balance(_ key: Key, _ value: Value, _ left: TreeNode?, _ right: TreeNode?) -> TreeNode {
        let leftSize = size(left)
        let rightSize = size(right)
        if leftSize + rightSize <= 1 {
            return TreeNode(key: key, value: value, left: left, right: right)
        }
        if rightSize > delta * leftSize {
            let right = right!
            if size(right.left) < ratio * size(right.right) {
                // Single left rotation.
                return TreeNode(
                    key: right.key, value: right.value,
                    left: TreeNode(key: key, value: value, left: left, right: right.left),
                    right: right.right)
            }
            // Double left rotation.
            let pivot = right.left!
            return TreeNode(
                key: pivot.key, value: pivot.value,
                left: TreeNode(key: key, value: value, left: left, right: pivot.left),
                right: TreeNode(key: right.key, value: right.value, left: pivot.right, right: right.right))
        }
        if leftSize > delta * rightSize {
            let left = left!
            if size(left.right) < ratio * size(left.left) {
                return TreeNode(
                    key: left.key, value: left.value,
                    left: left.left,
                    right: TreeNode(key: key, value: value, left: left.right, right: right))
            }
            let pivot = left.right!
            return TreeNode(
                key: pivot.key, value: pivot.value,
                left: TreeNode(key: left.key, value: left.value, left: left.left, right: pivot.left),
                right: TreeNode(key: key, value: value, left: pivot.right, right: right))
        }
        return TreeNode(key: key, value: value, left: left, right: right)
    }
}
