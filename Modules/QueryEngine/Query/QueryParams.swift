public import CoreTree

/// The parameters of a query: its order, optional start and end bounds, and an optional limit.
///
/// Build one with the chaining methods (each validates as the Firebase clients do and throws a
/// ``QueryError`` for combinations they reject):
///
/// ```swift
/// let params = try QueryParams().orderedBy(.child("height")).startingAt(.number(3)).limitedToLast(2)
/// ```
public struct QueryParams: Sendable, Hashable, CustomStringConvertible {
    /// A start or end bound: a value of the query's index, an optional key, inclusive or not.
    public struct Bound: Sendable, Hashable {
        /// The index value (for the key index, a string naming the key).
        public var value: Node
        /// The key that breaks ties among children with the bound's value; `nil` when not given.
        public var name: ChildKey?
        /// `true` for startAt / endAt / equalTo, `false` for startAfter / endBefore.
        public var inclusive: Bool
    }

    /// Which end a limited query keeps.
    public enum ViewFrom: String, Sendable, Hashable {
        /// limitToFirst: the first children.
        case left = "l"
        /// limitToLast: the last children.
        case right = "r"
    }

    /// The parameters themselves, boxed: a query travels in every event a view raises, and one
    /// reference is cheaper to copy (and to hold 100,000 times) than the bounds' nodes and keys.
    private final class Storage: @unchecked Sendable {
        // Mutated only while uniquely referenced (copy-on-write), so a shared box never changes.
        var index: QueryIndex = .priority
        var hasExplicitOrder = false
        var start: Bound?
        var end: Bound?
        var limit: Int?
        var explicitViewFrom: ViewFrom?

        init() {}

        init(copying other: Storage) {
            index = other.index
            hasExplicitOrder = other.hasExplicitOrder
            start = other.start
            end = other.end
            limit = other.limit
            explicitViewFrom = other.explicitViewFrom
        }
    }

    private var storage = Storage()

    /// The box, copied first when shared.
    private var uniqueStorage: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(copying: storage) }
            return storage
        }
    }

    /// The order.
    public internal(set) var index: QueryIndex {
        get { storage.index }
        set { uniqueStorage.index = newValue }
    }
    /// Whether an order was set explicitly.
    public internal(set) var hasExplicitOrder: Bool {
        get { storage.hasExplicitOrder }
        set { uniqueStorage.hasExplicitOrder = newValue }
    }
    /// The start bound.
    public internal(set) var start: Bound? {
        get { storage.start }
        set { uniqueStorage.start = newValue }
    }
    /// The end bound.
    public internal(set) var end: Bound? {
        get { storage.end }
        set { uniqueStorage.end = newValue }
    }
    /// The limit.
    public internal(set) var limit: Int? {
        get { storage.limit }
        set { uniqueStorage.limit = newValue }
    }
    /// Which end the limit keeps; set by limitToFirst / limitToLast.
    public internal(set) var explicitViewFrom: ViewFrom? {
        get { storage.explicitViewFrom }
        set { uniqueStorage.explicitViewFrom = newValue }
    }

    /// The default query: all data, priority order.
    public init() {}

    /// The default query.
    public static let `default` = QueryParams()

    // MARK: - Derived properties

    /// Whether the query keeps the first children (otherwise the last).
    public var isViewFromLeft: Bool {
        if let explicitViewFrom { return explicitViewFrom == .left }
        return start != nil
    }

    /// Whether the query loads all data at its location (no bounds, no limit).
    public var loadsAllData: Bool { start == nil && end == nil && limit == nil }

    /// Whether this is the default query (all data, priority order).
    public var isDefault: Bool { loadsAllData && index == .priority }

    /// The query to listen to on the server: the default query when this one loads all data.
    public var forListening: QueryParams { loadsAllData ? .default : self }

    /// The first position in range.
    public var startPosition: IndexKey {
        guard let start else { return index.minPosition }
        return index.position(value: start.value, name: start.name ?? (start.inclusive ? .min : .max))
    }

    /// The last position in range.
    public var endPosition: IndexKey {
        guard let end else { return index.maxPosition }
        return index.position(value: end.value, name: end.name ?? (end.inclusive ? .max : .min))
    }

    /// Whether the start bound excludes its own position (startAfter with a key, or on the key index).
    public var startIsExclusive: Bool {
        guard let start, !start.inclusive else { return false }
        return start.name != nil || index == .key
    }

    /// Whether the end bound excludes its own position (endBefore with a key, or on the key index).
    public var endIsExclusive: Bool {
        guard let end, !end.inclusive else { return false }
        return end.name != nil || index == .key
    }

    /// Whether `position` lies within the start and end bounds.
    public func contains(_ position: IndexKey) -> Bool {
        let startOrder = IndexKey.compare(startPosition, position)
        if startOrder > 0 || (startOrder == 0 && startIsExclusive) { return false }
        let endOrder = IndexKey.compare(position, endPosition)
        if endOrder > 0 || (endOrder == 0 && endIsExclusive) { return false }
        return true
    }

    // MARK: - Building

    /// Orders by `index`.
    ///
    /// - Throws: ``QueryError`` when an order was already set, or the bounds do not suit it.
    public func orderedBy(_ index: QueryIndex) throws(QueryError) -> QueryParams {
        if hasExplicitOrder {
            throw QueryError(.alreadySet, "You can't combine multiple orderBy calls.")
        }
        if case .child(let path) = index {
            if path.isRoot || path.keys.contains(where: { [".key", ".value", ".priority"].contains($0.stringValue) }) {
                throw QueryError(.invalidBound, "orderByChild needs a child path without .key, .value or .priority (use orderByKey, orderByValue or orderByPriority instead); got \"\(path.wireForm)\".")
            }
        }
        var copy = self
        copy.index = index
        copy.hasExplicitOrder = true
        try copy.validateBounds()
        return copy
    }

    /// Starts at children whose index value is `value` (and key at least `name`).
    public func startingAt(_ value: Node, name: ChildKey? = nil) throws(QueryError) -> QueryParams {
        try settingStart(Bound(value: value, name: name, inclusive: true), call: "startAt")
    }

    /// Starts after children whose index value is `value` (and key `name`).
    public func startingAfter(_ value: Node, name: ChildKey? = nil) throws(QueryError) -> QueryParams {
        try settingStart(Bound(value: value, name: name, inclusive: false), call: "startAfter")
    }

    /// Ends at children whose index value is `value` (and key at most `name`).
    public func endingAt(_ value: Node, name: ChildKey? = nil) throws(QueryError) -> QueryParams {
        try settingEnd(Bound(value: value, name: name, inclusive: true), call: "endAt")
    }

    /// Ends before children whose index value is `value` (and key `name`).
    public func endingBefore(_ value: Node, name: ChildKey? = nil) throws(QueryError) -> QueryParams {
        try settingEnd(Bound(value: value, name: name, inclusive: false), call: "endBefore")
    }

    /// Only children whose index value is `value` (and key `name`).
    public func equalTo(_ value: Node, name: ChildKey? = nil) throws(QueryError) -> QueryParams {
        if start != nil {
            throw QueryError(.alreadySet, "equalTo: Starting point was already set (by another call to startAt, startAfter or equalTo).")
        }
        if end != nil {
            throw QueryError(.alreadySet, "equalTo: Ending point was already set (by another call to endAt, endBefore or equalTo).")
        }
        return try startingAt(value, name: name).endingAt(value, name: name)
    }

    /// Keeps only the first `limit` children in range.
    public func limitedToFirst(_ limit: Int) throws(QueryError) -> QueryParams {
        try settingLimit(limit, viewFrom: .left, call: "limitToFirst")
    }

    /// Keeps only the last `limit` children in range.
    public func limitedToLast(_ limit: Int) throws(QueryError) -> QueryParams {
        try settingLimit(limit, viewFrom: .right, call: "limitToLast")
    }

    private func settingStart(_ bound: Bound, call: String) throws(QueryError) -> QueryParams {
        if start != nil {
            throw QueryError(.alreadySet, "\(call): Starting point was already set (by another call to startAt, startAfter or equalTo).")
        }
        var copy = self
        copy.start = bound
        try copy.validateBounds()
        return copy
    }

    private func settingEnd(_ bound: Bound, call: String) throws(QueryError) -> QueryParams {
        if end != nil {
            throw QueryError(.alreadySet, "\(call): Ending point was already set (by another call to endAt, endBefore or equalTo).")
        }
        var copy = self
        copy.end = bound
        try copy.validateBounds()
        return copy
    }

    private func settingLimit(_ limit: Int, viewFrom: ViewFrom, call: String) throws(QueryError) -> QueryParams {
        guard limit > 0 else {
            throw QueryError(.invalidLimit, "\(call): the limit must be a positive integer, not \(limit).")
        }
        if self.limit != nil {
            throw QueryError(.alreadySet, "\(call): Limit was already set (by another call to limitToFirst or limitToLast).")
        }
        var copy = self
        copy.limit = limit
        copy.explicitViewFrom = viewFrom
        return copy
    }

    /// Checks the bounds against the order, as the Firebase clients do.
    private func validateBounds() throws(QueryError) {
        let bounds = [start, end].compactMap { $0 }
        switch index {
        case .key:
            for bound in bounds {
                if bound.name != nil {
                    throw QueryError(.invalidBound, "When ordering by key, you may only pass one argument to startAt(), endAt(), or equalTo().")
                }
                guard case .string? = bound.value.leafValue else {
                    throw QueryError(.invalidBound, "When ordering by key, the argument passed to startAt(), startAfter(), endAt(), endBefore(), or equalTo() must be a string.")
                }
            }
        case .priority:
            for bound in bounds where !(bound.value.isEmpty || bound.value.leafValue.map(isPriorityLeaf) == true) {
                throw QueryError(.invalidBound, "When ordering by priority, the first argument passed to startAt(), startAfter(), endAt(), endBefore(), or equalTo() must be a valid priority value (null, a number, or a string).")
            }
        case .value, .child:
            for bound in bounds where !bound.value.isEmpty && bound.value.isLeaf == false {
                throw QueryError(.invalidBound, "The first argument passed to startAt(), startAfter(), endAt(), endBefore(), or equalTo() cannot be an object.")
            }
        }
    }

    private func isPriorityLeaf(_ leaf: LeafValue) -> Bool {
        if case .bool = leaf { return false }
        return true
    }

    public var description: String { identifier }

    /// Queries are equal when they select and order the same data; whether the priority order
    /// was named explicitly (builder state, absent from the wire form) does not count.
    public static func == (lhs: QueryParams, rhs: QueryParams) -> Bool {
        lhs.index == rhs.index && lhs.start == rhs.start && lhs.end == rhs.end && lhs.limit == rhs.limit
            && lhs.explicitViewFrom == rhs.explicitViewFrom
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(start)
        hasher.combine(end)
        hasher.combine(limit)
        hasher.combine(explicitViewFrom)
    }
}
