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
        // One pass sorts the changes into their event types, in raise order.
        var byType: [[Change]] = Array(repeating: [], count: 5)
        for change in changes {
            byType[change.type.raiseOrder].append(change)
            if change.type == .childChanged, let old = change.oldNode, index.indexedValueChanged(old: old, new: change.node.node) {
                byType[EventType.childMoved.raiseOrder].append(.childMoved(change.childName!, change.node.node))
            }
        }
        for var selected in byType where !selected.isEmpty {
            let type = selected[0].type
            if type != .value && selected.count > 1 {
                selected.sort { a, b in
                    index.compare(NamedNode(name: a.childName!, node: a.node.node), NamedNode(name: b.childName!, node: b.node.node)) < 0
                }
            }
            append(type, selected, registrations, eventCache, &events)
        }
    }

    private func append(
        _ type: EventType, _ changes: [Change], _ registrations: [any EventRegistration],
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
