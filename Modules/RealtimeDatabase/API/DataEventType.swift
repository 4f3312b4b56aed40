/// The kinds of events a query can be observed for (Firebase's `DataEventType`).
public enum DataEventType: Int, Sendable, Hashable, CaseIterable {
    /// A child was added to the location (or entered the query's window).
    case childAdded = 0
    /// A child was removed (or left the query's window).
    case childRemoved = 1
    /// A child's data changed.
    case childChanged = 2
    /// A child moved in the query's order.
    case childMoved = 3
    /// The data at the location, once it is known; raised again on every change.
    case value = 4
}

/// Identifies an observer, to remove it with `removeObserver(withHandle:)`.
public typealias DatabaseHandle = UInt
