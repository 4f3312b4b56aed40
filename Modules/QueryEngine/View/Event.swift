public import CoreTree

/// A listener registered on a query. The sync tree compares registrations by identity.
public protocol EventRegistration: AnyObject {
    /// Whether this registration wants events of `type`.
    func responds(to type: EventType) -> Bool
    /// Whether this registration wants to hear when its listen is cancelled.
    var wantsCancelEvents: Bool { get }
}

/// An event for one registration.
public struct Event {
    /// The kind of event.
    public var type: EventType
    /// The query the event belongs to.
    public var query: QuerySpec
    /// The registration to deliver it to.
    public var registration: any EventRegistration
    /// For `value`: the data at the query's location; for child events: the child's data.
    public var node: Node
    /// For child events: the child's key.
    public var childName: ChildKey?
    /// For added, changed and moved events: the key of the previous sibling in the query's order.
    public var previousName: ChildKey?

    /// The location the data in ``node`` is at.
    public var path: TreePath { childName.map { query.path.child($0) } ?? query.path }
}

/// A listen was cancelled (for example, denied by security rules).
public struct CancelEvent {
    /// The query whose listen was cancelled.
    public var query: QuerySpec
    /// The registration to tell.
    public var registration: any EventRegistration
    /// Why: the server's status (for example `permission_denied`).
    public var status: String
}

/// What the sync tree produces for listeners: data events and cancellations, in order.
public enum SyncEvent {
    /// A data event.
    case data(Event)
    /// A cancellation.
    case cancel(CancelEvent)
}
