import CoreTree

/// A filter that keeps every child, only ordering them.
struct IndexedFilter: NodeFilter {
    let index: QueryIndex
    var filtersNodes: Bool { false }
    var indexedFilter: IndexedFilter { self }

    func updateChild(
        _ snapshot: IndexedNode, key: ChildKey, newChild: Node, affectedPath: TreePath,
        source: any CompleteChildSource, shared: SharedUpdates?, accumulator: inout ChildChangeAccumulator?
    ) -> IndexedNode {
        let oldChild = shared?.immediateChild(of: snapshot.node, key) ?? snapshot.node.immediateChild(key)
        if oldChild.child(at: affectedPath) == newChild.child(at: affectedPath) && oldChild.isEmpty == newChild.isEmpty {
            return snapshot
        }
        if accumulator != nil {
            if newChild.isEmpty {
                if snapshot.node.hasChild(key) { accumulator!.track(.childRemoved(key, oldChild)) }
            } else if oldChild.isEmpty {
                accumulator!.track(.childAdded(key, newChild))
            } else {
                accumulator!.track(.childChanged(key, new: newChild, old: oldChild))
            }
        }
        if snapshot.node.isLeaf && newChild.isEmpty { return snapshot }
        return snapshot.updatingImmediateChild(key, to: newChild, oldChild: oldChild, shared: shared)
    }

    func updateFullNode(_ old: IndexedNode, new: IndexedNode, accumulator: inout ChildChangeAccumulator?) -> IndexedNode {
        if accumulator != nil {
            if !old.node.isLeaf {
                for (key, child) in old.node.children where !new.node.hasChild(key) {
                    accumulator!.track(.childRemoved(key, child))
                }
            }
            if !new.node.isLeaf {
                for (key, child) in new.node.children {
                    let oldChild = old.node.immediateChild(key)
                    if oldChild.isEmpty {
                        accumulator!.track(.childAdded(key, child))
                    } else if oldChild != child {
                        accumulator!.track(.childChanged(key, new: child, old: oldChild))
                    }
                }
            }
        }
        return new.index == index ? new : IndexedNode(new.node, index: index)
    }

    func updatePriority(_ old: IndexedNode, priority: Priority?) -> IndexedNode {
        old.node.isEmpty ? IndexedNode(.empty, index: index) : old.updatingPriority(priority)
    }
}
