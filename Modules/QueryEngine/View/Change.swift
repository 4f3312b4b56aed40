public import CoreTree

/// What kind of event a listener receives.
public enum EventType: String, Sendable, Hashable, CaseIterable {
    /// The whole data at the location, sent once the view's data is complete.
    case value
    /// A child entered the view.
    case childAdded = "child_added"
    /// A child left the view.
    case childRemoved = "child_removed"
    /// A child's data changed.
    case childChanged = "child_changed"
    /// A child changed position in the view's order.
    case childMoved = "child_moved"

    /// The order events of one operation are raised in: removed, added, moved, changed, value.
    var raiseOrder: Int {
        switch self {
        case .childRemoved: 0
        case .childAdded: 1
        case .childMoved: 2
        case .childChanged: 3
        case .value: 4
        }
    }
}

/// One change to a view's data, before it becomes events for each registration.
public struct Change: Sendable {
    /// The kind of change.
    public var type: EventType
    /// The new data (the old data for removals).
    public var node: IndexedNode
    /// The child's key, for child changes.
    public var childName: ChildKey?
    /// The child's previous data, for changes.
    public var oldNode: Node?

    static func value(_ node: IndexedNode) -> Change {
        Change(type: .value, node: node, childName: nil, oldNode: nil)
    }

    static func childAdded(_ name: ChildKey, _ node: Node) -> Change {
        Change(type: .childAdded, node: IndexedNode(node, index: .key), childName: name, oldNode: nil)
    }

    static func childRemoved(_ name: ChildKey, _ node: Node) -> Change {
        Change(type: .childRemoved, node: IndexedNode(node, index: .key), childName: name, oldNode: nil)
    }

    static func childChanged(_ name: ChildKey, new: Node, old: Node) -> Change {
        Change(type: .childChanged, node: IndexedNode(new, index: .key), childName: name, oldNode: old)
    }

    static func childMoved(_ name: ChildKey, _ node: Node) -> Change {
        Change(type: .childMoved, node: IndexedNode(node, index: .key), childName: name, oldNode: nil)
    }
}

/// Collapses the changes one operation makes to each child into at most one change per child.
///
/// Changes are kept in an array with an index by key (a location's first load tracks one change
/// per child: a dictionary of whole changes would hold several times their size in empty buckets).
struct ChildChangeAccumulator {
    /// The changes in the order first tracked, including those at `cancelled` positions.
    private var changes: [Change] = []
    private var positions: [ChildKey: Int] = [:]
    /// Positions whose changes cancelled out (added, then removed).
    private var cancelled: Set<Int> = []

    mutating func track(_ change: Change) {
        guard let name = change.childName, !name.isPriorityKey else { return }
        guard let position = positions[name] else {
            positions[name] = changes.count
            changes.append(change)
            return
        }
        if cancelled.remove(position) != nil {
            changes[position] = change
            return
        }
        let old = changes[position]
        switch (old.type, change.type) {
        case (.childAdded, .childRemoved):
            cancelled.insert(position)
        case (.childRemoved, .childAdded):
            changes[position] = .childChanged(name, new: change.node.node, old: old.node.node)
        case (.childChanged, .childRemoved):
            changes[position] = .childRemoved(name, old.oldNode ?? .empty)
        case (.childAdded, .childChanged):
            changes[position] = .childAdded(name, change.node.node)
        case (.childChanged, .childChanged):
            changes[position] = .childChanged(name, new: change.node.node, old: old.oldNode ?? .empty)
        default:
            preconditionFailure("Illegal combination of changes: \(change.type) after \(old.type) for \(name)")
        }
    }

    /// The changes, consuming the accumulator (so the usual case hands over its array uncopied).
    consuming func takeChanges() -> [Change] {
        if cancelled.isEmpty { return changes }
        return changes.enumerated().filter { !cancelled.contains($0.offset) }.map(\.element)
    }
}
