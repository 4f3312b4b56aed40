public import CoreTree

/// A view's copy of some data with what is known about its completeness.
public struct CacheNode: Sendable {
    /// The data.
    public var node: IndexedNode
    /// Whether the data is known complete (for a filtered cache: complete for the query).
    public var isFullyInitialized: Bool
    /// Whether the data was cut down by a query filter.
    public var isFiltered: Bool

    /// Whether the data at `path` below this cache is known complete.
    public func isComplete(for path: TreePath) -> Bool {
        guard let first = path.firstKey else { return isFullyInitialized && !isFiltered }
        return isComplete(forChild: first)
    }

    /// Whether the child `key` is known complete.
    public func isComplete(forChild key: ChildKey) -> Bool {
        (isFullyInitialized && !isFiltered) || node.node.hasChild(key)
    }
}

/// A view's two caches: what listeners have seen (event cache) and what the server sent (server cache).
public struct ViewCache: Sendable {
    /// What listeners have been told: server data with pending writes applied, then filtered.
    public var eventCache: CacheNode
    /// Server data only.
    public var serverCache: CacheNode

    func updatingEventSnap(_ node: IndexedNode, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(eventCache: CacheNode(node: node, isFullyInitialized: complete, isFiltered: filtered), serverCache: serverCache)
    }

    func updatingServerSnap(_ node: IndexedNode, complete: Bool, filtered: Bool) -> ViewCache {
        ViewCache(eventCache: eventCache, serverCache: CacheNode(node: node, isFullyInitialized: complete, isFiltered: filtered))
    }

    /// The event data when complete.
    public var completeEventSnap: Node? { eventCache.isFullyInitialized ? eventCache.node.node : nil }
    /// The server data when complete.
    public var completeServerSnap: Node? { serverCache.isFullyInitialized ? serverCache.node.node : nil }
}
