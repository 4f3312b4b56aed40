import CoreTree
import QueryEngine

/// An update for one subscriber.
typealias Delivery = (subscriber: any DataSubscriber, update: ListenUpdate)

/// Every listen of one namespace, and the updates a write causes for them.
///
/// Listens that load all the data at their location live in a ``ListenerTree``; filtering queries
/// in ``QueryListeners``. Each listen is also kept with the caller that holds it, so the listens a
/// caller may no longer read (new rules, a new or expired token) can be found and revoked.
struct ListenRegistry {
    /// A listen taken away from its subscriber; tell it (``DataSubscriber/revoked(path:params:tag:)``).
    struct Revoked {
        let subscriber: any DataSubscriber
        let path: TreePath
        let params: QueryParams
        let tag: Int?
    }

    private var listeners = ListenerTree()
    private let queries = QueryListeners()
    private var holders: [HolderKey: Holder] = [:]

    private struct HolderKey: Hashable {
        let subscriber: ObjectIdentifier
        let path: TreePath
        let query: String
        let tag: Int?
    }

    private struct Holder {
        let subscriber: any DataSubscriber
        let path: TreePath
        let params: QueryParams
        let tag: Int?
        var caller: Caller
    }

    /// The listens that load all their location's data.
    var count: Int { listeners.count }

    /// Every listen: where, with which query, held by whom.
    var all: [(path: TreePath, params: QueryParams, caller: Caller)] {
        holders.values.map { ($0.path, $0.params, $0.caller) }
    }

    /// `subscriber`'s listens.
    func listens(of subscriber: any DataSubscriber) -> [(path: TreePath, params: QueryParams)] {
        let id = ObjectIdentifier(subscriber)
        return holders.filter { $0.key.subscriber == id }.map { ($0.value.path, $0.value.params) }
    }

    /// Registers a listen held by `caller` (replacing the subscriber's listen with the same query
    /// and tag) and returns the data it selects now; `data` gives the complete data at a path.
    mutating func add(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?, caller: Caller,
                      data: (TreePath) -> Node) -> Node {
        let key = HolderKey(subscriber: ObjectIdentifier(subscriber), path: path, query: params.identifier, tag: tag)
        holders[key] = Holder(subscriber: subscriber, path: path, params: params, tag: tag, caller: caller)
        if params.loadsAllData {
            listeners.add(.init(subscriber: subscriber, tag: tag), at: path)
            return data(path)
        }
        return queries.add(subscriber: subscriber, query: QuerySpec(path: path, params: params), tag: tag, data: data)
    }

    /// Removes a listen; returns whether it existed.
    @discardableResult
    mutating func remove(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?) -> Bool {
        holders[HolderKey(subscriber: ObjectIdentifier(subscriber), path: path, query: params.identifier, tag: tag)] = nil
        if params.loadsAllData {
            return listeners.remove(subscriber: subscriber, tag: tag, at: path)
        }
        return queries.remove(subscriber: subscriber, query: QuerySpec(path: path, params: params), tag: tag)
    }

    /// Judges `subscriber`'s listens again as `caller`: the ones `mayRead` refuses are removed and
    /// returned, the others kept under the new identity.
    mutating func reauthorize(_ subscriber: any DataSubscriber, as caller: Caller,
                              mayRead: (TreePath, QueryParams, Caller) -> Bool) -> [Revoked] {
        let id = ObjectIdentifier(subscriber)
        var revoked: [Revoked] = []
        for (key, holder) in holders where key.subscriber == id {
            if mayRead(holder.path, holder.params, caller) {
                holders[key]?.caller = caller
            } else {
                revoked.append(revoke(holder))
            }
        }
        return revoked
    }

    /// Removes and returns every listen its holder may no longer read (`mayRead` judges).
    mutating func revokeNoLongerAllowed(mayRead: (TreePath, QueryParams, Caller) -> Bool) -> [Revoked] {
        holders.values.filter { !mayRead($0.path, $0.params, $0.caller) }.map { revoke($0) }
    }

    private mutating func revoke(_ holder: Holder) -> Revoked {
        remove(holder.subscriber, path: holder.path, params: holder.params, tag: holder.tag)
        return Revoked(subscriber: holder.subscriber, path: holder.path, params: holder.params, tag: holder.tag)
    }

    // MARK: - Updates a write causes

    /// The updates for an overwrite at `path`, the tree having gone from `old` to `new`.
    func overwriteDeliveries(at path: TreePath, old: Node, new: Node) -> [Delivery] {
        let newNode = new.child(at: path)
        return deliveries(
            at: path, payload: EncodedPayload(.overwrite(newNode)),
            belowPayload: { location in
                let changed = new.child(at: location)
                return changed.isIdentical(to: old.child(at: location)) ? nil : EncodedPayload(.overwrite(changed))
            },
            queryChanges: queries.applyOverwrite(path: path, node: newNode))
    }

    /// The updates for a merge of `children` at `path`, the tree having gone from `old` to `new`.
    func mergeDeliveries(at path: TreePath, children: [(path: TreePath, node: Node)], old: Node, new: Node) -> [Delivery] {
        var index: MergeIndex?
        return deliveries(
            at: path, payload: EncodedPayload(.merge(children)),
            belowPayload: { location in
                if index == nil { index = MergeIndex(children) }
                return Self.belowMergePayload(location: location, mergePath: path, index: index!, old: old, new: new)
            },
            queryChanges: queries.applyMerge(path: path, children: children))
    }

    /// The updates one write causes: `payload` for listens at or above `path`, `belowPayload` (made
    /// once per location; `nil` for no update) for listens below it, and the query listens' changes.
    private func deliveries(
        at path: TreePath, payload: EncodedPayload, belowPayload: (TreePath) -> EncodedPayload?,
        queryChanges: [(QueryListeners.Registration, ListenUpdate.Change)]
    ) -> [Delivery] {
        var result: [Delivery] = []
        listeners.forEachListen(atOrAbove: path) { location, listen in
            result.append((listen.subscriber, ListenUpdate(listenPath: location, tag: listen.tag, path: path, payload: payload, isInitial: false)))
        }
        var below: [TreePath: EncodedPayload?] = [:]
        listeners.forEachListen(below: path) { location, listen in
            let payload = below[location] ?? {
                let made = belowPayload(location)
                below[location] = made
                return made
            }()
            if let payload {
                result.append((listen.subscriber, ListenUpdate(listenPath: location, tag: listen.tag, path: location, payload: payload, isInitial: false)))
            }
        }
        for (registration, change) in queryChanges {
            result.append((registration.subscriber, ListenUpdate(
                listenPath: registration.query.path, tag: registration.tag, path: registration.query.path,
                payload: EncodedPayload(change), isInitial: false)))
        }
        return result
    }

    /// The update for a listen at `location`, below an update at `mergePath`: an overwrite when the
    /// location lies inside a written child, a merge of the written children below it when it lies
    /// above some, nothing when none touches it.
    private static func belowMergePayload(location: TreePath, mergePath: TreePath, index: MergeIndex, old: Node, new: Node)
        -> EncodedPayload? {
        switch index.part(at: location.relative(to: mergePath)!) {
        case .inside:
            let changed = new.child(at: location)
            return changed.isIdentical(to: old.child(at: location)) ? nil : EncodedPayload(.overwrite(changed))
        case .below(let inside):
            return EncodedPayload(.merge(inside))
        case .untouched:
            return nil
        }
    }
}
