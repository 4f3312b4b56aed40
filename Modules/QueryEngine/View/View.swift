import CoreTree

/// One query's view at a location: its caches, its registrations and how it processes operations.
final class View {
    let query: QuerySpec
    private let processor: ViewProcessor
    private let generator: EventGenerator
    private(set) var viewCache: ViewCache
    private(set) var registrations: [any EventRegistration] = []

    init(query: QuerySpec, initial: ViewCache) {
        self.query = query
        let filter = query.params.nodeFilter
        let indexFilter = IndexedFilter(index: query.params.index)
        processor = ViewProcessor(filter: filter)
        generator = EventGenerator(query: query)
        var none: ChildChangeAccumulator? = nil
        // The server cache is only indexed here; filtering waits for a tagged listen's data.
        let serverSnap = indexFilter.updateFullNode(
            IndexedNode(.empty, index: query.params.index),
            new: IndexedNode(initial.serverCache.node.node, index: query.params.index), accumulator: &none)
        let eventSnap = filter.updateFullNode(
            IndexedNode(.empty, index: query.params.index),
            new: IndexedNode(initial.eventCache.node.node, index: query.params.index), accumulator: &none)
        viewCache = ViewCache(
            eventCache: CacheNode(node: eventSnap, isFullyInitialized: initial.eventCache.isFullyInitialized, isFiltered: filter.filtersNodes),
            serverCache: CacheNode(node: serverSnap, isFullyInitialized: initial.serverCache.isFullyInitialized, isFiltered: indexFilter.filtersNodes))
    }

    /// The server data this view holds (complete or not).
    var serverCache: Node { viewCache.serverCache.node.node }

    /// The event data when complete.
    var completeNode: Node? { viewCache.completeEventSnap }

    /// Complete server data at `path` below the view, if this view can vouch for it.
    func completeServerCache(at path: TreePath) -> Node? {
        guard let cache = viewCache.completeServerSnap else { return nil }
        // A filtered view is only complete for the children it holds.
        if query.params.loadsAllData || (path.firstKey.map { !cache.immediateChild($0).isEmpty } ?? false) {
            return cache.child(at: path)
        }
        return nil
    }

    var isEmpty: Bool { registrations.isEmpty }

    func addRegistration(_ registration: any EventRegistration) { registrations.append(registration) }

    /// Removes `registration` (all of them when `nil`); with a cancel status, tells each its listen ended.
    func removeRegistration(_ registration: (any EventRegistration)?, cancelStatus: String?) -> [SyncEvent] {
        var events: [SyncEvent] = []
        if let cancelStatus {
            for existing in registrations where existing.wantsCancelEvents {
                events.append(.cancel(CancelEvent(query: query, registration: existing, status: cancelStatus)))
            }
        }
        if let registration {
            if let position = registrations.firstIndex(where: { $0 === registration }) {
                registrations.remove(at: position)
            }
        } else {
            registrations = []
        }
        return events
    }

    /// Applies `operation`; `shared` holds work the other views at this location did for it.
    func apply(
        _ operation: Operation, writes: WriteTreeRef, completeServerCache: Node?, shared: SharedUpdates? = nil, into events: inout [SyncEvent]
    ) {
        let old = viewCache
        let result = processor.apply(operation, to: old, writes: writes, completeCache: completeServerCache, shared: shared)
        precondition(result.viewCache.serverCache.isFullyInitialized || !old.serverCache.isFullyInitialized,
                     "Once a server snap is complete, it should never go back")
        viewCache = result.viewCache
        generator.append(result.changes, eventCache: result.viewCache.eventCache.node, registrations: registrations, to: &events)
    }

    /// The events a new registration receives: one child_added per child, then value if complete.
    func initialEvents(for registration: any EventRegistration) -> [SyncEvent] {
        let eventSnap = viewCache.eventCache
        var changes: [Change] = []
        if !eventSnap.node.node.isLeaf {
            for (key, child) in eventSnap.node.node.children { changes.append(.childAdded(key, child)) }
        }
        if eventSnap.isFullyInitialized { changes.append(.value(eventSnap.node)) }
        var events: [SyncEvent] = []
        generator.append(changes, eventCache: eventSnap.node, registrations: [registration], to: &events)
        return events
    }
}
