import CoreTree

/// Applies operations to a view's caches and collects the child changes they cause.
struct ViewProcessor {
    let filter: any NodeFilter
    /// Work shared with the other views applying the same operation; set for one ``apply``.
    private var shared: SharedUpdates?

    init(filter: any NodeFilter) { self.filter = filter }

    struct Result {
        var viewCache: ViewCache
        var changes: [Change]
    }

    func apply(
        _ operation: Operation, to oldViewCache: ViewCache, writes: WriteTreeRef, completeCache: Node?, shared: SharedUpdates?
    ) -> Result {
        var processor = self
        processor.shared = shared
        return processor.apply(operation, to: oldViewCache, writes: writes, completeCache: completeCache)
    }

    private func apply(_ operation: Operation, to oldViewCache: ViewCache, writes: WriteTreeRef, completeCache: Node?) -> Result {
        var accumulator: ChildChangeAccumulator? = ChildChangeAccumulator()
        let newViewCache: ViewCache
        switch operation {
        case .overwrite(let source, let path, let node):
            if source.fromUser {
                newViewCache = applyUserOverwrite(oldViewCache, path, node, writes, completeCache, &accumulator)
            } else {
                let filterServerNode = source.tagged || (oldViewCache.serverCache.isFiltered && !path.isRoot)
                newViewCache = applyServerOverwrite(oldViewCache, path, node, writes, completeCache, filterServerNode, &accumulator)
            }
        case .merge(let source, let path, let children):
            if source.fromUser {
                newViewCache = applyUserMerge(oldViewCache, path, children, writes, completeCache, &accumulator)
            } else {
                let filterServerNode = source.tagged || oldViewCache.serverCache.isFiltered
                newViewCache = applyServerMerge(oldViewCache, path, children, writes, completeCache, filterServerNode, &accumulator)
            }
        case .ackUserWrite(let path, let affected, let revert):
            newViewCache = revert
                ? revertUserWrite(oldViewCache, path, writes, completeCache, &accumulator)
                : ackUserWrite(oldViewCache, path, affected, writes, completeCache, &accumulator)
        case .listenComplete(_, let path):
            newViewCache = listenComplete(oldViewCache, path, writes, &accumulator)
        }
        var changes = accumulator.take()?.takeChanges() ?? []
        ViewProcessor.maybeAddValueEvent(old: oldViewCache, new: newViewCache, changes: &changes)
        return Result(viewCache: newViewCache, changes: changes)
    }

    static func maybeAddValueEvent(old: ViewCache, new: ViewCache, changes: inout [Change]) {
        let eventCache = new.eventCache
        guard eventCache.isFullyInitialized else { return }
        let node = eventCache.node.node
        let isLeafOrEmpty = node.isLeaf || node.isEmpty
        let oldComplete = old.completeEventSnap
        if !changes.isEmpty || !old.eventCache.isFullyInitialized
            || (isLeafOrEmpty && node != oldComplete) || node.priority != oldComplete?.priority
        {
            changes.append(.value(eventCache.node))
        }
    }

    /// `node.immediateChild(key)`, shared with the other views when they hold the same node.
    private func immediateChild(of node: Node, _ key: ChildKey) -> Node {
        shared?.immediateChild(of: node, key) ?? node.immediateChild(key)
    }

    /// `node.updatingChild(at: path, to: value)`, shared with the other views when they hold the same node.
    private func updatingChild(of node: Node, at path: TreePath, to value: Node) -> Node {
        shared?.updatingChild(of: node, at: path, to: value) ?? node.updatingChild(at: path, to: value)
    }

    private func indexed(_ node: Node) -> IndexedNode { IndexedNode(node, index: filter.index) }

    /// `node` indexed for this view, reusing `cache`'s index when it holds the very same node
    /// (a complete event cache without pending writes is the server cache: one index build, not two).
    private func indexed(_ node: Node, reusing cache: IndexedNode) -> IndexedNode {
        cache.index == filter.index && cache.node.isIdentical(to: node) ? cache : indexed(node)
    }

    private func generateEventCacheAfterServerEvent(
        _ viewCache: ViewCache, _ changePath: TreePath, _ writes: WriteTreeRef,
        _ source: any CompleteChildSource, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldEventSnap = viewCache.eventCache
        if writes.shadowingWrite(changePath) != nil { return viewCache }
        let newEventCache: IndexedNode
        if changePath.isRoot {
            precondition(viewCache.serverCache.isFullyInitialized, "If change path is empty, we must have complete server data")
            if viewCache.serverCache.isFiltered {
                // Only complete children may get writes applied, or events would be raised for incomplete ones.
                let serverCache = viewCache.completeServerSnap ?? .empty
                let completeChildren = serverCache.isLeaf ? Node.empty : serverCache
                let eventChildren = writes.calcCompleteEventChildren(completeChildren)
                newEventCache = filter.updateFullNode(
                    viewCache.eventCache.node, new: indexed(eventChildren, reusing: viewCache.serverCache.node), accumulator: &accumulator)
            } else {
                let complete = writes.calcCompleteEventCache(viewCache.completeServerSnap) ?? .empty
                newEventCache = filter.updateFullNode(
                    viewCache.eventCache.node, new: indexed(complete, reusing: viewCache.serverCache.node), accumulator: &accumulator)
            }
        } else {
            let childKey = changePath.firstKey!
            if childKey.isPriorityKey {
                precondition(changePath.depth == 1, "Can't have a priority with additional path components")
                let oldEventNode = oldEventSnap.node
                let serverNode = viewCache.serverCache.node.node
                if let updatedPriority = writes.calcEventCacheAfterServerOverwrite(
                    changePath, serverNode: serverNode.immediateChild(childKey))
                {
                    newEventCache = filter.updatePriority(oldEventNode, priority: updatedPriority.asPriority)
                } else {
                    newEventCache = oldEventNode
                }
            } else {
                let childChangePath = changePath.droppingFirst
                var newEventChild: Node?
                if oldEventSnap.isComplete(forChild: childKey) {
                    let serverChild = immediateChild(of: viewCache.serverCache.node.node, childKey)
                    let oldEventChild = immediateChild(of: oldEventSnap.node.node, childKey)
                    if let update = writes.calcEventCacheAfterServerOverwrite(changePath, serverNode: serverChild.child(at: childChangePath)) {
                        newEventChild = updatingChild(of: oldEventChild, at: childChangePath, to: update)
                    } else {
                        newEventChild = oldEventChild
                    }
                } else {
                    newEventChild = writes.calcCompleteChild(childKey, serverCache: viewCache.serverCache)
                }
                if let newEventChild {
                    newEventCache = filter.updateChild(
                        oldEventSnap.node, key: childKey, newChild: newEventChild, affectedPath: childChangePath,
                        source: source, shared: shared, accumulator: &accumulator)
                } else {
                    newEventCache = oldEventSnap.node
                }
            }
        }
        return viewCache.updatingEventSnap(
            newEventCache, complete: oldEventSnap.isFullyInitialized || changePath.isRoot, filtered: filter.filtersNodes)
    }

    private func applyServerOverwrite(
        _ oldViewCache: ViewCache, _ changePath: TreePath, _ changedSnap: Node, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ filterServerNode: Bool, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldServerSnap = oldViewCache.serverCache
        let serverFilter: any NodeFilter = filterServerNode ? filter : filter.indexedFilter
        var none: ChildChangeAccumulator? = nil
        let newServerCache: IndexedNode
        if changePath.isRoot {
            newServerCache = serverFilter.updateFullNode(oldServerSnap.node, new: indexed(changedSnap), accumulator: &none)
        } else if serverFilter.filtersNodes && !oldServerSnap.isFiltered {
            // Filtering a server node that was not filtered yet: simulate a full update.
            let newServerNode = oldServerSnap.node.node.updatingChild(at: changePath, to: changedSnap)
            newServerCache = serverFilter.updateFullNode(oldServerSnap.node, new: indexed(newServerNode), accumulator: &none)
        } else {
            let childKey = changePath.firstKey!
            if !oldServerSnap.isComplete(for: changePath) && changePath.depth > 1 {
                // Incomplete nodes are not updated with updates meant for other listeners.
                return oldViewCache
            }
            let childChangePath = changePath.droppingFirst
            let childNode = immediateChild(of: oldServerSnap.node.node, childKey)
            let newChildNode = updatingChild(of: childNode, at: childChangePath, to: changedSnap)
            if childKey.isPriorityKey {
                newServerCache = serverFilter.updatePriority(oldServerSnap.node, priority: newChildNode.asPriority)
            } else {
                newServerCache = serverFilter.updateChild(
                    oldServerSnap.node, key: childKey, newChild: newChildNode, affectedPath: childChangePath,
                    source: NoCompleteChildSource(), shared: shared, accumulator: &none)
            }
        }
        let newViewCache = oldViewCache.updatingServerSnap(
            newServerCache, complete: oldServerSnap.isFullyInitialized || changePath.isRoot, filtered: serverFilter.filtersNodes)
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: newViewCache, completeServerCache: completeCache)
        return generateEventCacheAfterServerEvent(newViewCache, changePath, writes, source, &accumulator)
    }

    private func applyUserOverwrite(
        _ oldViewCache: ViewCache, _ changePath: TreePath, _ changedSnap: Node, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldEventSnap = oldViewCache.eventCache
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: oldViewCache, completeServerCache: completeCache)
        if changePath.isRoot {
            let newEventCache = filter.updateFullNode(oldEventSnap.node, new: indexed(changedSnap), accumulator: &accumulator)
            return oldViewCache.updatingEventSnap(newEventCache, complete: true, filtered: filter.filtersNodes)
        }
        let childKey = changePath.firstKey!
        if childKey.isPriorityKey {
            let newEventCache = filter.updatePriority(oldEventSnap.node, priority: changedSnap.asPriority)
            return oldViewCache.updatingEventSnap(newEventCache, complete: oldEventSnap.isFullyInitialized, filtered: oldEventSnap.isFiltered)
        }
        let childChangePath = changePath.droppingFirst
        let oldChild = oldEventSnap.node.node.immediateChild(childKey)
        let newChild: Node
        if childChangePath.isRoot {
            newChild = changedSnap
        } else if let childNode = source.completeChild(childKey) {
            if childChangePath.lastKey?.isPriorityKey == true && childNode.child(at: childChangePath.parent!).isEmpty {
                // A priority update on an empty node: the server sends the priority if the node exists.
                newChild = childNode
            } else {
                newChild = childNode.updatingChild(at: childChangePath, to: changedSnap)
            }
        } else {
            newChild = .empty
        }
        if oldChild == newChild { return oldViewCache }
        let newEventSnap = filter.updateChild(
            oldEventSnap.node, key: childKey, newChild: newChild, affectedPath: childChangePath, source: source, shared: shared, accumulator: &accumulator)
        return oldViewCache.updatingEventSnap(newEventSnap, complete: oldEventSnap.isFullyInitialized, filtered: filter.filtersNodes)
    }

    private func applyUserMerge(
        _ viewCache: ViewCache, _ path: TreePath, _ changedChildren: ImmutableTree<Node>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        // Changes to children in view first: they may bump others out of a limited window and make room.
        var current = viewCache
        var later: [(TreePath, Node)] = []
        changedChildren.forEach { relativePath, childNode in
            let writePath = path.appending(relativePath)
            if let front = writePath.firstKey, viewCache.eventCache.isComplete(forChild: front) {
                current = applyUserOverwrite(current, writePath, childNode, writes, completeCache, &accumulator)
            } else {
                later.append((writePath, childNode))
            }
        }
        for (writePath, childNode) in later {
            current = applyUserOverwrite(current, writePath, childNode, writes, completeCache, &accumulator)
        }
        return current
    }

    private func applyMerge(_ node: Node, _ merge: ImmutableTree<Node>) -> Node {
        var result = node
        merge.forEach { relativePath, childNode in result = result.updatingChild(at: relativePath, to: childNode) }
        return result
    }

    private func applyServerMerge(
        _ viewCache: ViewCache, _ path: TreePath, _ changedChildren: ImmutableTree<Node>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ filterServerNode: Bool, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        // Without a cache yet, the merge was meant for an earlier listen here; wait for the full data.
        if viewCache.serverCache.node.node.isEmpty && !viewCache.serverCache.isFullyInitialized { return viewCache }
        var current = viewCache
        let mergeTree = path.isRoot ? changedChildren : ImmutableTree<Node>.empty.settingTree(path, changedChildren)
        let serverNode = viewCache.serverCache.node.node
        for (childKey, childTree) in mergeTree.children where serverNode.hasChild(childKey) {
            let newChild = applyMerge(serverNode.immediateChild(childKey), childTree)
            current = applyServerOverwrite(current, TreePath(keys: [childKey]), newChild, writes, completeCache, filterServerNode, &accumulator)
        }
        for (childKey, childTree) in mergeTree.children where !serverNode.hasChild(childKey) {
            let isUnknownDeepMerge = !viewCache.serverCache.isComplete(forChild: childKey) && childTree.value == nil
            if isUnknownDeepMerge { continue }
            let newChild = applyMerge(serverNode.immediateChild(childKey), childTree)
            current = applyServerOverwrite(current, TreePath(keys: [childKey]), newChild, writes, completeCache, filterServerNode, &accumulator)
        }
        return current
    }

    private func ackUserWrite(
        _ viewCache: ViewCache, _ ackPath: TreePath, _ affected: ImmutableTree<Bool>, _ writes: WriteTreeRef,
        _ completeCache: Node?, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        if writes.shadowingWrite(ackPath) != nil { return viewCache }
        let filterServerNode = viewCache.serverCache.isFiltered
        let serverCache = viewCache.serverCache
        if affected.value != nil {
            if (ackPath.isRoot && serverCache.isFullyInitialized) || serverCache.isComplete(for: ackPath) {
                return applyServerOverwrite(
                    viewCache, ackPath, serverCache.node.node.child(at: ackPath), writes, completeCache, filterServerNode, &accumulator)
            }
            if ackPath.isRoot {
                // Acking data here without full data: re-apply what the cache has as a merge.
                var changed = ImmutableTree<Node>.empty
                for (name, node) in serverCache.node.node.children { changed = changed.setting(TreePath(keys: [name]), node) }
                return applyServerMerge(viewCache, ackPath, changed, writes, completeCache, filterServerNode, &accumulator)
            }
            return viewCache
        }
        var changed = ImmutableTree<Node>.empty
        affected.forEach { mergePath, _ in
            let serverCachePath = ackPath.appending(mergePath)
            if serverCache.isComplete(for: serverCachePath) {
                changed = changed.setting(mergePath, serverCache.node.node.child(at: serverCachePath))
            }
        }
        return applyServerMerge(viewCache, ackPath, changed, writes, completeCache, filterServerNode, &accumulator)
    }

    private func listenComplete(
        _ viewCache: ViewCache, _ path: TreePath, _ writes: WriteTreeRef, _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        let oldServer = viewCache.serverCache
        let newViewCache = viewCache.updatingServerSnap(
            oldServer.node, complete: oldServer.isFullyInitialized || path.isRoot, filtered: oldServer.isFiltered)
        return generateEventCacheAfterServerEvent(newViewCache, path, writes, NoCompleteChildSource(), &accumulator)
    }

    private func revertUserWrite(
        _ viewCache: ViewCache, _ path: TreePath, _ writes: WriteTreeRef, _ completeServerCache: Node?,
        _ accumulator: inout ChildChangeAccumulator?
    ) -> ViewCache {
        if writes.shadowingWrite(path) != nil { return viewCache }
        let source = WriteTreeCompleteChildSource(writes: writes, viewCache: viewCache, completeServerCache: completeServerCache)
        let oldEventCache = viewCache.eventCache.node
        var newEventCache: IndexedNode
        if path.isRoot || path.firstKey!.isPriorityKey {
            let newNode: Node
            if viewCache.serverCache.isFullyInitialized {
                newNode = writes.calcCompleteEventCache(viewCache.completeServerSnap) ?? .empty
            } else {
                newNode = writes.calcCompleteEventChildren(viewCache.serverCache.node.node)
            }
            newEventCache = filter.updateFullNode(oldEventCache, new: indexed(newNode), accumulator: &accumulator)
        } else {
            let childKey = path.firstKey!
            var newChild = writes.calcCompleteChild(childKey, serverCache: viewCache.serverCache)
            if newChild == nil && viewCache.serverCache.isComplete(forChild: childKey) {
                newChild = oldEventCache.node.immediateChild(childKey)
            }
            if let newChild {
                newEventCache = filter.updateChild(
                    oldEventCache, key: childKey, newChild: newChild, affectedPath: path.droppingFirst, source: source, shared: shared, accumulator: &accumulator)
            } else if viewCache.eventCache.node.node.hasChild(childKey) {
                newEventCache = filter.updateChild(
                    oldEventCache, key: childKey, newChild: .empty, affectedPath: path.droppingFirst, source: source, shared: shared, accumulator: &accumulator)
            } else {
                newEventCache = oldEventCache
            }
            if newEventCache.node.isEmpty && viewCache.serverCache.isFullyInitialized {
                // Every child write may have been reverted; the old data may have been a leaf.
                if let complete = writes.calcCompleteEventCache(viewCache.completeServerSnap), complete.isLeaf {
                    newEventCache = filter.updateFullNode(newEventCache, new: indexed(complete), accumulator: &accumulator)
                }
            }
        }
        let complete = viewCache.serverCache.isFullyInitialized || writes.shadowingWrite(.root) != nil
        return viewCache.updatingEventSnap(newEventCache, complete: complete, filtered: filter.filtersNodes)
    }
}

/// Children for a filter from the event cache, else from the server cache with writes applied.
struct WriteTreeCompleteChildSource: CompleteChildSource {
    let writes: WriteTreeRef
    let viewCache: ViewCache
    let completeServerCache: Node?

    func completeChild(_ name: ChildKey) -> Node? {
        let eventCache = viewCache.eventCache
        if eventCache.isComplete(forChild: name) { return eventCache.node.node.immediateChild(name) }
        let serverCache = completeServerCache.map {
            CacheNode(node: IndexedNode($0, index: .key), isFullyInitialized: true, isFiltered: false)
        } ?? viewCache.serverCache
        return writes.calcCompleteChild(name, serverCache: serverCache)
    }

    func child(after child: NamedNode, index: QueryIndex, reverse: Bool) -> NamedNode? {
        // The view's own complete, unfiltered server cache is already ordered by the query's index:
        // walking it costs O(log n), where indexing other complete data would cost O(n log n).
        let server = viewCache.serverCache
        if server.isFullyInitialized && !server.isFiltered && server.node.index == index {
            return writes.calcIndexedSlice(indexed: server.node, start: child, count: 1, reverse: reverse).first
        }
        let completeServerData = completeServerCache ?? viewCache.completeServerSnap
        return writes.calcIndexedSlice(completeServerData, start: child, count: 1, reverse: reverse, index: index).first
    }
}

extension Node {
    /// The priority a `.priority` node denotes: a number or string leaf, else none.
    var asPriority: Priority? {
        switch leafValue {
        case .number(let value)?: .number(value)
        case .string(let value)?: .string(value)
        default: nil
        }
    }
}
