extension SortedMap: Sequence {
    /// Iterates a ``SortedMap`` in key order, forwards or backwards, from any starting key.
    ///
    /// Keeps an explicit stack of the path still to visit, so each step is amortised O(1) and the
    /// whole walk O(n) with O(log n) memory.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var stack: ContiguousArray<TreeNode> = []
        @usableFromInline let reversed: Bool

        @inlinable
        init(root: TreeNode?, reversed: Bool) {
            self.reversed = reversed
            stack.reserveCapacity(48)
            pushEdge(from: root)
        }

        /// Starts at the first key >= `start` (forwards) or the last key <= `start` (backwards).
        @inlinable
        init(root: TreeNode?, start: Key, reversed: Bool) {
            self.reversed = reversed
            stack.reserveCapacity(48)
            var node = root
            while let current = node {
                let order = Key.compare(current.key, start)
                if reversed {
                    if order <= 0 {
                        stack.append(current)
                        node = order == 0 ? nil : current.right
                    } else {
                        node = current.left
                    }
                } else {
                    if order >= 0 {
                        stack.append(current)
                        node = order == 0 ? nil : current.left
                    } else {
                        node = current.right
                    }
                }
            }
        }

        @inlinable
        mutating func pushEdge(from node: TreeNode?) {
            var node = node
            while let current = node {
                stack.append(current)
                node = reversed ? current.right : current.left
            }
        }

        @inlinable
        public mutating func next() -> (key: Key, value: Value)? {
            guard let node = stack.popLast() else { return nil }
            pushEdge(from: reversed ? node.left : node.right)
            return (node.key, node.value)
        }
    }

    /// An iterator over all elements in ascending key order.
    @inlinable
    public func makeIterator() -> Iterator { Iterator(root: root, reversed: false) }

    /// The number of elements, known without iterating.
    @inlinable
    public var underestimatedCount: Int { count }

    /// All elements in descending key order. - Complexity: O(1) to create, O(n) to walk.
    @inlinable
    public func reversedElements() -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, reversed: true))
    }

    /// Elements in ascending order starting at the first key `>= key`.
    ///
    /// - Complexity: O(log n) to create, amortised O(1) per element.
    @inlinable
    public func elements(from key: Key) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, start: key, reversed: false))
    }

    /// Elements in descending order starting at the last key `<= key`.
    ///
    /// - Complexity: O(log n) to create, amortised O(1) per element.
    @inlinable
    public func reversedElements(from key: Key) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: root, start: key, reversed: true))
    }

    /// All keys in ascending order.
    @inlinable
    public var keys: LazyMapSequence<SortedMap, Key> { lazy.map(\.key) }

    /// Calls `body` for each element in ascending order until it returns `false`.
    ///
    /// - Returns: `false` if `body` stopped the walk early.
    @inlinable
    @discardableResult
    public func forEachUntil(_ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        try SortedMap.walk(root, body)
    }

    @inlinable
    static func walk(_ node: TreeNode?, _ body: (Key, Value) throws -> Bool) rethrows -> Bool {
        guard let node else { return true }
        return try walk(node.left, body) && body(node.key, node.value) && walk(node.right, body)
    }
}

extension SortedMap: Equatable where Value: Equatable {
    /// Two maps are equal when they hold the same keys with equal values.
    ///
    /// - Complexity: O(1) when both share one tree, otherwise O(n).
    @inlinable
    public static func == (lhs: SortedMap, rhs: SortedMap) -> Bool {
        if lhs.root === rhs.root { return true }
        if lhs.count != rhs.count { return false }
        var left = lhs.makeIterator()
        var right = rhs.makeIterator()
        while let a = left.next(), let b = right.next() {
            if Key.compare(a.key, b.key) != 0 || a.value != b.value { return false }
        }
        return true
    }
}

extension SortedMap {
    /// Checks the tree's ordering, size and balance invariants; for tests.
    ///
    /// - Returns: a description of the first violation found, or `nil` when the tree is sound.
    package func invariantViolation() -> String? {
        func check(_ node: TreeNode?, lower: Key?, upper: Key?) -> String? {
            guard let node else { return nil }
            if let lower, Key.compare(node.key, lower) <= 0 { return "key order broken at \(node.key)" }
            if let upper, Key.compare(node.key, upper) >= 0 { return "key order broken at \(node.key)" }
            let leftSize = SortedMap.size(node.left)
            let rightSize = SortedMap.size(node.right)
            if node.size != leftSize + rightSize + 1 { return "size field wrong at \(node.key)" }
            if leftSize + rightSize > 1 {
                if leftSize > SortedMap.delta * rightSize || rightSize > SortedMap.delta * leftSize {
                    return "unbalanced at \(node.key): \(leftSize) vs \(rightSize)"
                }
            }
            return check(node.left, lower: lower, upper: node.key)
                ?? check(node.right, lower: node.key, upper: upper)
        }
        return check(root, lower: nil, upper: nil)
    }

    /// The height of the tree; for tests.
    package var height: Int {
        func height(_ node: TreeNode?) -> Int {
            guard let node else { return 0 }
            return 1 + Swift.max(height(node.left), height(node.right))
        }
        return height(root)
    }
}

extension SortedMap {
    /// Whether both maps share one tree, so they are certainly equal.
    ///
    /// Unlike `==` this never compares elements: a `false` answer says nothing about equality.
    ///
    /// - Complexity: O(1).
    @inlinable
    public func isIdentical(to other: SortedMap) -> Bool { root === other.root }
}
