import CoreTree

/// Turns a view's changes into events for its registrations, in the order listeners expect:
/// removed, added, moved, changed, then value; each type sorted by the query's order.
struct EventGenerator {
    let query: QuerySpec
    var index: QueryIndex { query.params.index }

    /// Appends the events for `changes` to `events`.
    func append(_ changes: [Change], eventCache: IndexedNode, registrations: [any EventRegistration], to events: inout [SyncEvent]) {
        if changes.isEmpty || registrations.isEmpty { return }
        let index = self.index
        // Positions, not copies, of the changes by event type in raise order (a large location's
        // first load brings one change per child).
        var byType: [[Int]] = Array(repeating: [], count: 5)
        var moves: [Change] = []
        for (position, change) in changes.enumerated() {
            byType[change.type.raiseOrder].append(position)
            if change.type == .childChanged, let old = change.oldNode, index.indexedValueChanged(old: old, new: change.node.node) {
                moves.append(.childMoved(change.childName!, change.node.node))
            }
        }
        byType[EventType.childMoved.raiseOrder] = Array(moves.indices)
        // At most one event per change and registration. Reserving that (with room for the
        // other views' few events) spares a large first load the copies of doubling growth.
        let needed = events.count + (changes.count + moves.count) * registrations.count
        if needed > events.capacity { events.reserveCapacity(needed + needed / 16 + 16) }
        for (order, var positions) in byType.enumerated() where !positions.isEmpty {
            let source = order == EventType.childMoved.raiseOrder ? moves : changes
            let type = source[positions[0]].type
            if type != .value && positions.count > 1 {
                positions.sort { a, b in
                    index.compare(
                        NamedNode(name: source[a].childName!, node: source[a].node.node),
                        NamedNode(name: source[b].childName!, node: source[b].node.node)) < 0
                }
            }
            append(type, positions.lazy.map { source[$0] }, registrations, eventCache, &events)
        }
    }

    private func append(
        _ type: EventType, _ changes: some Sequence<Change>, _ registrations: [any EventRegistration],
        _ eventCache: IndexedNode, _ events: inout [SyncEvent]
    ) {
        let responding = registrations.filter { $0.responds(to: type) }
        if responding.isEmpty { return }
        for change in changes {
            var previousName: ChildKey?
            if type != .value && type != .childRemoved, let name = change.childName {
                previousName = eventCache.predecessor(of: name, child: change.node.node)
            }
            for registration in responding {
                events.append(.data(Event(
                    type: type, query: query, registration: registration, node: change.node.node,
                    childName: change.childName, previousName: previousName)))
            }
        }
    }
}
