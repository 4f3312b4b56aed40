import CoreTree

/// Turns a view's changes into events for its registrations, in the order listeners expect:
/// removed, added, moved, changed, then value; each type sorted by the query's order.
struct EventGenerator {
    let query: QuerySpec
    var index: QueryIndex { query.params.index }

    func events(for changes: [Change], eventCache: IndexedNode, registrations: [any EventRegistration]) -> [SyncEvent] {
        var moves: [Change] = []
        for change in changes where change.type == .childChanged {
            if let old = change.oldNode, index.indexedValueChanged(old: old, new: change.node.node) {
                moves.append(.childMoved(change.childName!, change.node.node))
            }
        }
        var events: [SyncEvent] = []
        append(.childRemoved, changes, registrations, eventCache, &events)
        append(.childAdded, changes, registrations, eventCache, &events)
        append(.childMoved, moves, registrations, eventCache, &events)
        append(.childChanged, changes, registrations, eventCache, &events)
        append(.value, changes, registrations, eventCache, &events)
        return events
    }

    private func append(
        _ type: EventType, _ changes: [Change], _ registrations: [any EventRegistration],
        _ eventCache: IndexedNode, _ events: inout [SyncEvent]
    ) {
        var selected = changes.filter { $0.type == type }
        if type != .value {
            selected.sort { a, b in
                index.compare(NamedNode(name: a.childName!, node: a.node.node), NamedNode(name: b.childName!, node: b.node.node)) < 0
            }
        }
        for change in selected {
            var previousName: ChildKey?
            if type != .value && type != .childRemoved, let name = change.childName {
                previousName = eventCache.predecessor(of: name, child: change.node.node)
            }
            for registration in registrations where registration.responds(to: type) {
                events.append(.data(Event(
                    type: type, query: query, registration: registration, node: change.node.node,
                    childName: change.childName, previousName: previousName)))
            }
        }
    }
}
