import Foundation
import CoreTree
import QueryEngine

/// A location with ordering, range and limit, to observe (Firebase's `DatabaseQuery`).
///
/// Each `query…` method returns a new query. Combining them wrongly (two orderings, a limit
/// twice, a key range on a non-key order) stops the program with Firebase's rules in the message,
/// as Firebase does.
public class DatabaseQuery: @unchecked Sendable {
    // @unchecked: immutable, but a non-final class (DatabaseReference extends it) cannot be checked.
    /// The database this query reads (Firebase's `DatabaseReference.database`).
    public let database: Database
    let path: TreePath
    let params: QueryParams

    init(database: Database, path: TreePath, params: QueryParams) {
        self.database = database
        self.path = path
        self.params = params
    }

    var spec: QuerySpec { QuerySpec(path: path, params: params) }

    /// The location the query is at.
    public var ref: DatabaseReference { DatabaseReference(database: database, path: path) }

    // MARK: - Building queries

    private func with(_ build: (QueryParams) throws(QueryError) -> QueryParams) -> DatabaseQuery {
        do {
            return DatabaseQuery(database: database, path: path, params: try build(params))
        } catch {
            preconditionFailure("Invalid query at \(path.wireForm): \(error.message)")
        }
    }

    private static func bound(_ value: Any?) -> Node {
        do {
            let node = try ValueConversion.node(from: value)
            precondition(node.isEmpty || node.isLeaf, "Query values must be a string, number, boolean or nil, not \(value ?? "nil").")
            return node
        } catch {
            preconditionFailure(error.message)
        }
    }

    private static func key(_ childKey: String?) -> ChildKey? {
        guard let childKey else { return nil }
        do {
            try Validation.validateKey(childKey)
        } catch {
            preconditionFailure(error.message)
        }
        return ChildKey(childKey)
    }

    /// Orders children by key.
    public func queryOrderedByKey() -> DatabaseQuery { with { params throws(QueryError) in try params.orderedBy(.key) } }
    /// Orders children by their value.
    public func queryOrderedByValue() -> DatabaseQuery { with { params throws(QueryError) in try params.orderedBy(.value) } }
    /// Orders children by priority (the default order).
    public func queryOrderedByPriority() -> DatabaseQuery { with { params throws(QueryError) in try params.orderedBy(.priority) } }
    /// Orders children by the value at a relative path below each child.
    public func queryOrdered(byChild key: String) -> DatabaseQuery {
        let childPath = DatabaseReference.validatedRelativePath(key)
        return with { params throws(QueryError) in try params.orderedBy(.child(childPath)) }
    }

    /// Children at or after `startValue` in the query's order.
    public func queryStarting(atValue startValue: Any?) -> DatabaseQuery { queryStarting(atValue: startValue, childKey: nil) }
    /// Children at or after (`startValue`, `childKey`) in the query's order.
    public func queryStarting(atValue startValue: Any?, childKey: String?) -> DatabaseQuery {
        let value = Self.bound(startValue), name = Self.key(childKey)
        return with { params throws(QueryError) in try params.startingAt(value, name: name) }
    }
    /// Children after `startValue` in the query's order.
    public func queryStarting(afterValue startAfterValue: Any?) -> DatabaseQuery { queryStarting(afterValue: startAfterValue, childKey: nil) }
    /// Children after (`startAfterValue`, `childKey`) in the query's order.
    public func queryStarting(afterValue startAfterValue: Any?, childKey: String?) -> DatabaseQuery {
        let value = Self.bound(startAfterValue), name = Self.key(childKey)
        return with { params throws(QueryError) in try params.startingAfter(value, name: name) }
    }
    /// Children at or before `endValue` in the query's order.
    public func queryEnding(atValue endValue: Any?) -> DatabaseQuery { queryEnding(atValue: endValue, childKey: nil) }
    /// Children at or before (`endValue`, `childKey`) in the query's order.
    public func queryEnding(atValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        let value = Self.bound(endValue), name = Self.key(childKey)
        return with { params throws(QueryError) in try params.endingAt(value, name: name) }
    }
    /// Children before `endValue` in the query's order.
    public func queryEnding(beforeValue endValue: Any?) -> DatabaseQuery { queryEnding(beforeValue: endValue, childKey: nil) }
    /// Children before (`endValue`, `childKey`) in the query's order.
    public func queryEnding(beforeValue endValue: Any?, childKey: String?) -> DatabaseQuery {
        let value = Self.bound(endValue), name = Self.key(childKey)
        return with { params throws(QueryError) in try params.endingBefore(value, name: name) }
    }
    /// Children whose ordered value equals `value`.
    public func queryEqual(toValue value: Any?) -> DatabaseQuery { queryEqual(toValue: value, childKey: nil) }
    /// The child whose ordered value equals `value` and key equals `childKey`.
    public func queryEqual(toValue value: Any?, childKey: String?) -> DatabaseQuery {
        let node = Self.bound(value), name = Self.key(childKey)
        return with { params throws(QueryError) in try params.equalTo(node, name: name) }
    }
    /// At most the first `limit` children in the query's order.
    public func queryLimited(toFirst limit: UInt) -> DatabaseQuery {
        with { params throws(QueryError) in try params.limitedToFirst(Int(limit)) }
    }
    /// At most the last `limit` children in the query's order.
    public func queryLimited(toLast limit: UInt) -> DatabaseQuery {
        with { params throws(QueryError) in try params.limitedToLast(Int(limit)) }
    }

    // MARK: - Observing

    /// Calls `block` for every event of `eventType`, starting with the data already known.
    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) -> DatabaseHandle {
        observe(eventType, with: block, withCancel: nil)
    }

    /// Calls `block` for every event; `cancelBlock` if the server refuses the listen.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        register(eventType, once: false, callback: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// Calls `block` for every event of `eventType`; with `includeMetadataChanges` (beyond
    /// Firebase, as Firestore's listeners), a `.value` observer is also called when only the
    /// snapshot's ``DataSnapshot/metadata`` changes: its local write acknowledged, the server's
    /// data arriving after cached data, the connection lost. Other event types ignore it.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, includeMetadataChanges: Bool, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)? = nil
    ) -> DatabaseHandle {
        register(eventType, once: false, includeMetadataChanges: includeMetadataChanges, callback: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// Calls `block` with each snapshot and the key of the child before it in the query's order.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void
    ) -> DatabaseHandle {
        observe(eventType, andPreviousSiblingKeyWith: block, withCancel: nil)
    }

    /// Calls `block` with each snapshot and its previous sibling's key; `cancelBlock` on refusal.
    @discardableResult
    public func observe(
        _ eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) -> DatabaseHandle {
        register(eventType, once: false, callback: block, cancel: cancelBlock)
    }

    /// Calls `block` once, for the first event of `eventType`, then stops observing.
    public func observeSingleEvent(of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) {
        observeSingleEvent(of: eventType, with: block, withCancel: nil)
    }

    /// Calls `block` once for the first event, or `cancelBlock` if the listen is refused.
    public func observeSingleEvent(
        of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) {
        register(eventType, once: true, callback: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// Calls `block` once, with the first event's snapshot and previous sibling key.
    public func observeSingleEvent(
        of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void
    ) {
        observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: block, withCancel: nil)
    }

    /// Calls `block` once with the first event, or `cancelBlock` if the listen is refused.
    public func observeSingleEvent(
        of eventType: DataEventType, andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
        withCancel cancelBlock: ((any Error) -> Void)?
    ) {
        register(eventType, once: true, callback: block, cancel: cancelBlock)
    }

    @discardableResult
    func register(
        _ eventType: DataEventType, once: Bool, includeMetadataChanges: Bool = false, callback: @escaping ObserverRegistration.Callback,
        cancel: ObserverRegistration.CancelCallback?
    ) -> DatabaseHandle {
        let registration = makeRegistration(
            eventType, once: once, includeMetadataChanges: includeMetadataChanges, callback: callback, cancel: cancel)
        database.repo.addObserver(registration, for: spec)
        return registration.handle
    }

    /// A registration with a fresh handle, not added yet; a single-event one removes itself after its event.
    func makeRegistration(
        _ eventType: DataEventType, once: Bool, includeMetadataChanges: Bool = false, callback: @escaping ObserverRegistration.Callback,
        cancel: ObserverRegistration.CancelCallback?
    ) -> ObserverRegistration {
        let repo = database.repo
        let registration = ObserverRegistration(
            handle: repo.makeHandle(), eventType: eventType, once: once, includeMetadataChanges: includeMetadataChanges,
            callback: callback, cancel: cancel)
        if once {
            let handle = registration.handle
            registration.onFirstEvent = { [weak repo] in
                if let repo { repo.enqueue { repo.removeObserver(withHandle: handle) } }
            }
        }
        return registration
    }

    /// Stops the observer `handle` (from any `observe` call on this database).
    public func removeObserver(withHandle handle: DatabaseHandle) {
        database.repo.removeObserver(withHandle: handle)
    }

    /// Stops every observer of this query (at a reference: every observer at its location, but
    /// not those at child locations).
    public func removeAllObservers() {
        database.repo.removeAllObservers(for: spec)
    }

    /// Keeps this query's data synced and on disk, even with no observers (`keepSynced(true)`),
    /// or stops that. Kept data is never pruned from the cache.
    public func keepSynced(_ keepSynced: Bool) {
        precondition(path.firstKey != .info, "keepSynced is not allowed on /.info locations.")
        database.repo.keepSynced(spec, keepSynced)
    }
}

extension DatabaseQuery: Hashable {
    /// Two queries are equal when they are of the same kind (reference or query), on the same
    /// database instance, at the same location, with the same ordering, range and limit.
    public static func == (lhs: DatabaseQuery, rhs: DatabaseQuery) -> Bool {
        type(of: lhs) == type(of: rhs) && lhs.database === rhs.database && lhs.path == rhs.path && lhs.params == rhs.params
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(database))
        hasher.combine(path)
        hasher.combine(params)
    }
}
