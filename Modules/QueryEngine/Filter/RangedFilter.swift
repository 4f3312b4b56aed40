import CoreTree

/// A filter that keeps the children between a query's start and end bounds.
struct RangedFilter: NodeFilter {
    let params: QueryParams
    let indexedFilter: IndexedFilter
    var index: QueryIndex { params.index }
    var filtersNodes: Bool { true }

    init(params: QueryParams) {
        self.params = params
        self.indexedFilter = IndexedFilter(index: params.index)
    }

    /// Whether a child lies within the bounds.
    func matches(_ child: NamedNode) -> Bool { params.contains(index.key(for: child)) }

    func updateChild(
        _ snapshot: IndexedNode, key: ChildKey, newChild: Node, affectedPath: TreePath,
        source: any CompleteChildSource, shared: SharedUpdates?, accumulator: inout ChildChangeAccumulator?
    ) -> IndexedNode {
        let child = matches(NamedNode(name: key, node: newChild)) ? newChild : .empty
        return indexedFilter.updateChild(
            snapshot, key: key, newChild: child, affectedPath: affectedPath, source: source, shared: shared,
            accumulator: &accumulator)
    }

    func updateFullNode(_ old: IndexedNode, new: IndexedNode, accumulator: inout ChildChangeAccumulator?) -> IndexedNode {
        var filtered = new.node.isLeaf ? IndexedNode(.empty, index: index) : new
        filtered = filtered.updatingPriority(nil)
        for (key, child) in new.node.children where !matches(NamedNode(name: key, node: child)) {
            filtered = filtered.updatingImmediateChild(key, to: .empty)
        }
        return indexedFilter.updateFullNode(old, new: filtered, accumulator: &accumulator)
    }

    func updatePriority(_ old: IndexedNode, priority: Priority?) -> IndexedNode { old }
}
