extension Node {
    /// Whether both nodes are the very same value in memory (or equal scalars), so they are
    /// certainly equal.
    ///
    /// A cheap test for sharing work between caches that hold the same data: children nodes
    /// compare by the identity of their tree, never by content, so `false` says nothing about
    /// equality.
    ///
    /// - Complexity: O(1) for children nodes and for number and bool leaves; a string leaf
    ///   compares its string.
    @inlinable
    public func isIdentical(to other: Node) -> Bool {
        switch (storage, other.storage) {
        case (.empty, .empty): return true
        case (.leaf(let a), .leaf(let b)): return a == b
        case (.prioritizedLeaf(let a), .prioritizedLeaf(let b)): return a === b
        case (.children(let a), .children(let b)): return a.isIdentical(to: b)
        case (.prioritizedChildren(let a), .prioritizedChildren(let b)): return a === b
        default: return false
        }
    }
}
