import CoreTree

/// Keeps a view's data to what its query selects, reporting each child change it makes.
protocol NodeFilter: Sendable {
    /// The order used.
    var index: QueryIndex { get }
    /// Whether the filter drops children (ranges or limits), so its output is not the full data.
    var filtersNodes: Bool { get }
    /// The unfiltered filter with the same index.
    var indexedFilter: IndexedFilter { get }

    /// Applies a change to one child. `affectedPath` is where, below the child, the change happened;
    /// `shared` holds work other views at the location did for the same operation.
    func updateChild(
        _ snapshot: IndexedNode, key: ChildKey, newChild: Node, affectedPath: TreePath,
        source: any CompleteChildSource, shared: SharedUpdates?, accumulator: inout ChildChangeAccumulator?) -> IndexedNode

    /// Replaces all the data.
    func updateFullNode(_ old: IndexedNode, new: IndexedNode, accumulator: inout ChildChangeAccumulator?) -> IndexedNode

    /// Changes the priority of the whole node.
    func updatePriority(_ old: IndexedNode, priority: Priority?) -> IndexedNode
}

extension QueryParams {
    /// The filter that implements these parameters.
    var nodeFilter: any NodeFilter {
        if loadsAllData { return IndexedFilter(index: index) }
        if limit != nil { return LimitedFilter(params: self) }
        return RangedFilter(params: self)
    }
}
