import CoreTree

/// A filter that keeps at most `limit` children within a query's bounds, from the left
/// (limitToFirst) or the right (limitToLast). When a child leaves a full window, the next child
/// from the complete data, if known, moves in; the filter never invents children it does not know.
struct LimitedFilter: NodeFilter {
    let params: QueryParams
    let rangedFilter: RangedFilter
    let limit: Int
    let reverse: Bool
    var index: QueryIndex { params.index }
    var filtersNodes: Bool { true }
    var indexedFilter: IndexedFilter { rangedFilter.indexedFilter }

    init(params: QueryParams) {
        self.params = params
        self.rangedFilter = RangedFilter(params: params)
        self.limit = params.limit ?? Int.max
        self.reverse = !params.isViewFromLeft
    }

    func updateChild(
        _ snapshot: IndexedNode, key: ChildKey, newChild: Node, affectedPath: TreePath,
        source: any CompleteChildSource, shared: SharedUpdates?, accumulator: inout ChildChangeAccumulator?
    ) -> IndexedNode {
        let child = rangedFilter.matches(NamedNode(name: key, node: newChild)) ? newChild : .empty
        if snapshot.node.immediateChild(key) == child { return snapshot }
        if snapshot.count < limit {
            return indexedFilter.updateChild(
                snapshot, key: key, newChild: child, affectedPath: affectedPath, source: source, shared: shared,
                accumulator: &accumulator)
        }
        return fullLimitUpdateChild(snapshot, key: key, child: child, source: source, accumulator: &accumulator)
    }

    func updateFullNode(_ old: IndexedNode, new: IndexedNode, accumulator: inout ChildChangeAccumulator?) -> IndexedNode {
        var filtered = IndexedNode(.empty, index: index)
        if !new.node.isLeaf && !new.node.isEmpty {
            let source = new.index == index ? new : IndexedNode(new.node, index: index)
            var count = 0
            let start = reverse ? params.endPosition : params.startPosition
            source.forEachChild(from: start, reversed: reverse) { child in
                if !withinDirectionalStart(child) { return true }
                if !withinDirectionalEnd(child) || count >= limit { return false }
                filtered = filtered.updatingImmediateChild(child.name, to: child.node)
                count += 1
                return count < limit
            }
        }
        return indexedFilter.updateFullNode(old, new: filtered, accumulator: &accumulator)
    }

    func updatePriority(_ old: IndexedNode, priority: Priority?) -> IndexedNode { old }

    private func withinStart(_ child: NamedNode) -> Bool {
        let order = IndexKey.compare(params.startPosition, index.key(for: child))
        return params.startIsExclusive ? order < 0 : order <= 0
    }

    private func withinEnd(_ child: NamedNode) -> Bool {
        let order = IndexKey.compare(index.key(for: child), params.endPosition)
        return params.endIsExclusive ? order < 0 : order <= 0
    }

    private func withinDirectionalStart(_ child: NamedNode) -> Bool { reverse ? withinEnd(child) : withinStart(child) }
    private func withinDirectionalEnd(_ child: NamedNode) -> Bool { reverse ? withinStart(child) : withinEnd(child) }

    /// Order within the window's direction: negative when `lhs` comes first.
    private func directionalCompare(_ lhs: NamedNode, _ rhs: NamedNode) -> Int {
        reverse ? index.compare(rhs, lhs) : index.compare(lhs, rhs)
    }

    private func fullLimitUpdateChild(
        _ snapshot: IndexedNode, key: ChildKey, child: Node,
        source: any CompleteChildSource, accumulator: inout ChildChangeAccumulator?
    ) -> IndexedNode {
        let newChild = NamedNode(name: key, node: child)
        guard let boundary = reverse ? snapshot.firstChild : snapshot.lastChild else { return snapshot }
        let inRange = rangedFilter.matches(newChild)
        if snapshot.node.hasChild(key) {
            let oldChild = snapshot.node.immediateChild(key)
            var next = source.child(after: boundary, index: index, reverse: reverse)
            while let candidate = next, candidate.name == key || snapshot.node.hasChild(candidate.name) {
                // A child updated by the same merge but not applied here yet: skip it.
                next = source.child(after: candidate, index: index, reverse: reverse)
            }
            let compareNext = next.map { directionalCompare($0, newChild) } ?? 1
            if inRange && !child.isEmpty && compareNext >= 0 {
                accumulator?.track(.childChanged(key, new: child, old: oldChild))
                return snapshot.updatingImmediateChild(key, to: child)
            }
            accumulator?.track(.childRemoved(key, oldChild))
            let shrunk = snapshot.updatingImmediateChild(key, to: .empty)
            if let next, rangedFilter.matches(next) {
                accumulator?.track(.childAdded(next.name, next.node))
                return shrunk.updatingImmediateChild(next.name, to: next.node)
            }
            return shrunk
        }
        if child.isEmpty { return snapshot }
        if inRange && directionalCompare(boundary, newChild) >= 0 {
            accumulator?.track(.childRemoved(boundary.name, boundary.node))
            accumulator?.track(.childAdded(key, child))
            return snapshot.updatingImmediateChild(key, to: child).updatingImmediateChild(boundary.name, to: .empty)
        }
        return snapshot
    }
}
