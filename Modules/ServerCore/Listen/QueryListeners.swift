import CoreTree
import QueryEngine

/// Listens to filtering queries (ranges and limits), served by a ``QueryEngine/SyncTree`` that
/// keeps each queried location's data indexed, so a change to one child updates each window in
/// O(log n) instead of refiltering the whole location.
///
/// Each queried location also holds a hidden default listen, which keeps the complete data there;
/// a window that loses a child takes the next one from it.
final class QueryListeners {
    /// One client's listen to one query.
    final class Registration: EventRegistration {
        let subscriber: any DataSubscriber
        let tag: Int?
        let query: QuerySpec
        init(subscriber: any DataSubscriber, tag: Int?, query: QuerySpec) {
            self.subscriber = subscriber
            self.tag = tag
            self.query = query
        }
        func responds(to type: EventType) -> Bool { type != .childMoved }
        var wantsCancelEvents: Bool { false }
    }

    /// The hidden listen that keeps a location's complete data.
    private final class Anchor: EventRegistration {
        var users = 0
        func responds(to type: EventType) -> Bool { false }
        var wantsCancelEvents: Bool { false }
    }

    /// The server holds all its data: there is nothing to listen to.
    private final class NoListens: ListenProvider {
        func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String,
                            onComplete: @escaping (ListenOutcome) -> [SyncEvent]) -> [SyncEvent] { [] }
        func stopListening(_ query: QuerySpec, tag: Int?) {}
    }

    private let provider = NoListens()
    private lazy var tree = SyncTree(listenProvider: provider)
    private var anchors: [TreePath: Anchor] = [:]
    private var registrations: [Key: Registration] = [:]

    private struct Key: Hashable {
        let subscriber: ObjectIdentifier
        let path: TreePath
        let params: QueryParams
        let tag: Int?
    }

    /// Whether no query is listened to.
    var isEmpty: Bool { registrations.isEmpty }

    /// Adds a listen and returns the query's current result. `data` gives the complete data at a path.
    func add(subscriber: any DataSubscriber, query: QuerySpec, tag: Int?, data: (TreePath) -> Node) -> Node {
        let key = Key(subscriber: ObjectIdentifier(subscriber), path: query.path, params: query.params, tag: tag)
        if let old = registrations[key] { _ = remove(old) }
        let anchor: Anchor
        if let existing = anchors[query.path] {
            anchor = existing
        } else {
            anchor = Anchor()
            anchors[query.path] = anchor
            _ = tree.addEventRegistration(anchor, for: .default(at: query.path))
            _ = tree.applyServerOverwrite(path: query.path, node: data(query.path))
        }
        anchor.users += 1
        let registration = Registration(subscriber: subscriber, tag: tag, query: query)
        registrations[key] = registration
        let events = tree.addEventRegistration(registration, for: query)
        for case .data(let event) in events where event.type == .value { return event.node }
        return query.params.filtered(data(query.path))
    }

    /// Removes a listen; returns whether it was there.
    @discardableResult
    func remove(subscriber: any DataSubscriber, query: QuerySpec, tag: Int?) -> Bool {
        let key = Key(subscriber: ObjectIdentifier(subscriber), path: query.path, params: query.params, tag: tag)
        guard let registration = registrations[key] else { return false }
        return remove(registration)
    }

    private func remove(_ registration: Registration) -> Bool {
        let key = Key(subscriber: ObjectIdentifier(registration.subscriber), path: registration.query.path,
                      params: registration.query.params, tag: registration.tag)
        registrations[key] = nil
        _ = tree.removeEventRegistration(registration, for: registration.query)
        if let anchor = anchors[registration.query.path] {
            anchor.users -= 1
            if anchor.users == 0 {
                anchors[registration.query.path] = nil
                _ = tree.removeEventRegistration(anchor, for: .default(at: registration.query.path))
            }
        }
        return true
    }

    /// Applies a write of `node` at `path` and returns each affected listen's update.
    func applyOverwrite(path: TreePath, node: Node) -> [(Registration, ListenUpdate.Change)] {
        guard !registrations.isEmpty else { return [] }
        return updates(from: tree.applyServerOverwrite(path: path, node: node))
    }

    /// Applies an update of `children` below `path` and returns each affected listen's update.
    func applyMerge(path: TreePath, children: [(path: TreePath, node: Node)]) -> [(Registration, ListenUpdate.Change)] {
        guard !registrations.isEmpty else { return [] }
        return updates(from: tree.applyServerMerge(path: path, children: children))
    }

    /// Turns one operation's events into one change per listen: a merge of the children that
    /// entered, changed or left its window, or an overwrite when its result is not a set of children.
    private func updates(from events: [SyncEvent]) -> [(Registration, ListenUpdate.Change)] {
        var order: [ObjectIdentifier] = []
        var changed: [ObjectIdentifier: (Registration, [(path: TreePath, node: Node)], value: Node?)] = [:]
        for case .data(let event) in events {
            guard let registration = event.registration as? Registration else { continue }
            let id = ObjectIdentifier(registration)
            if changed[id] == nil {
                order.append(id)
                changed[id] = (registration, [], nil)
            }
            switch event.type {
            case .childAdded, .childChanged:
                changed[id]!.1.append((TreePath(keys: [event.childName!]), event.node))
            case .childRemoved:
                changed[id]!.1.append((TreePath(keys: [event.childName!]), .empty))
            case .value:
                changed[id]!.value = event.node
            case .childMoved:
                break
            }
        }
        return order.compactMap { id in
            let (registration, children, value) = changed[id]!
            if let value, value.isLeaf || (children.isEmpty && value.isEmpty) {
                return (registration, .overwrite(value))
            }
            if children.isEmpty { return nil }
            return (registration, .merge(children))
        }
    }
}
