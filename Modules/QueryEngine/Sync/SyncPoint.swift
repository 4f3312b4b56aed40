import CoreTree

/// The views at one location, keyed by query identifier, in the order they were added.
final class SyncPoint {
    private(set) var views: [(identifier: String, view: View)] = []

    var isEmpty: Bool { views.isEmpty }

    func view(withIdentifier identifier: String) -> View? {
        views.first { $0.identifier == identifier }?.view
    }

    func apply(_ operation: Operation, writes: WriteTreeRef, completeServerCache: Node?, into events: inout [SyncEvent]) {
        if let query = operation.source.query {
            guard let view = view(withIdentifier: query.identifier) else {
                preconditionFailure("SyncTree gave us an op for an invalid query.")
            }
            view.apply(operation, writes: writes, completeServerCache: completeServerCache, into: &events)
            return
        }
        if views.count == 1 {
            views[0].view.apply(operation, writes: writes, completeServerCache: completeServerCache, into: &events)
            return
        }
        // The views usually hold the same nodes: one view's work is reused by the next.
        let shared = SharedUpdates()
        for entry in views {
            entry.view.apply(operation, writes: writes, completeServerCache: completeServerCache, shared: shared, into: &events)
        }
    }

    /// A new view for `query` (not yet added), built from the caches given.
    func makeView(for query: QuerySpec, writes: WriteTreeRef, serverCache: Node, serverCacheComplete: Bool) -> View {
        var eventCache = writes.calcCompleteEventCache(serverCacheComplete ? serverCache : nil)
        var eventCacheComplete = false
        if eventCache != nil {
            eventCacheComplete = true
        } else if !serverCache.isLeaf {
            eventCache = writes.calcCompleteEventChildren(serverCache)
        } else {
            eventCache = .empty
        }
        let index = query.params.index
        let initial = ViewCache(
            eventCache: CacheNode(node: IndexedNode(eventCache!, index: index), isFullyInitialized: eventCacheComplete, isFiltered: false),
            serverCache: CacheNode(node: IndexedNode(serverCache, index: index), isFullyInitialized: serverCacheComplete, isFiltered: false))
        return View(query: query, initial: initial)
    }

    func addRegistration(
        _ registration: any EventRegistration, for query: QuerySpec, writes: WriteTreeRef, serverCache: Node, serverCacheComplete: Bool
    ) -> [SyncEvent] {
        let view: View
        if let existing = self.view(withIdentifier: query.identifier) {
            view = existing
        } else {
            view = makeView(for: query, writes: writes, serverCache: serverCache, serverCacheComplete: serverCacheComplete)
            views.append((query.identifier, view))
        }
        view.addRegistration(registration)
        return view.initialEvents(for: registration)
    }

    /// Removes a registration (all when `nil`). A removal on the default query looks in every view.
    ///
    /// - Returns: the queries whose views went away (plus the default query when the last complete
    ///   view went), and any cancel events.
    func removeRegistration(
        _ registration: (any EventRegistration)?, for query: QuerySpec, cancelStatus: String?
    ) -> (removed: [QuerySpec], events: [SyncEvent]) {
        var removed: [QuerySpec] = []
        var events: [SyncEvent] = []
        let hadCompleteView = hasCompleteView
        let candidates = query.identifier == "default" ? views.map(\.identifier) : [query.identifier]
        for identifier in candidates {
            guard let view = view(withIdentifier: identifier) else { continue }
            events += view.removeRegistration(registration, cancelStatus: cancelStatus)
            if view.isEmpty {
                views.removeAll { $0.identifier == identifier }
                if !view.query.loadsAllData { removed.append(view.query) }
            }
        }
        if hadCompleteView && !hasCompleteView { removed.append(.default(at: query.path)) }
        return (removed, events)
    }

    /// The views of queries that do not load all data.
    var queryViews: [View] { views.map(\.view).filter { !$0.query.loadsAllData } }

    /// Complete server data at `path` below this point from any view that has it.
    func completeServerCache(at path: TreePath) -> Node? {
        for (_, view) in views {
            if let cache = view.completeServerCache(at: path) { return cache }
        }
        return nil
    }

    /// The view serving `query`: for queries that load all data, any complete view.
    func viewForQuery(_ query: QuerySpec) -> View? {
        query.loadsAllData ? completeView : view(withIdentifier: query.identifier)
    }

    var hasCompleteView: Bool { completeView != nil }

    /// A view that loads all data at this location, if any.
    var completeView: View? { views.first { $0.view.query.loadsAllData }?.view }
}
