public import CoreTree

extension QueryParams {
    /// The part of `node` (the data at a query's location) that these parameters select: the
    /// children within the range, then the first or last `limit` of them in index order.
    ///
    /// A leaf selects nothing under a filtering query, as in the Firebase clients.
    ///
    /// - Complexity: O(n log n) for an index other than the key index, O(n) otherwise.
    public func filtered(_ node: Node) -> Node {
        if loadsAllData { return node }
        var none: ChildChangeAccumulator? = nil
        return nodeFilter.updateFullNode(
            IndexedNode(.empty, index: index), new: IndexedNode(node, index: index), accumulator: &none
        ).node
    }
}
