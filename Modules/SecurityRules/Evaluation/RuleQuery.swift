public import CoreTree

/// The query a read asks for, as `query` in a `.read` rule sees it.
///
/// A plain read (no parameters) has `query.orderByKey == true` and the other orderings false, as
/// Firebase records.
public struct RuleQuery: Sendable, Hashable {
    /// How the query orders its children.
    public enum Order: Sendable, Hashable {
        /// `orderByKey`.
        case key
        /// `orderByValue`.
        case value
        /// `orderByPriority`.
        case priority
        /// `orderByChild`, with the child path.
        case child(String)
    }

    /// The ordering, or nil for a plain read.
    public var order: Order?
    /// `query.startAt`.
    public var startAt: LeafValue?
    /// `query.endAt`.
    public var endAt: LeafValue?
    /// `query.equalTo`.
    public var equalTo: LeafValue?
    /// `query.limitToFirst`.
    public var limitToFirst: Int?
    /// `query.limitToLast`.
    public var limitToLast: Int?

    /// A query; all parameters default to absent (a plain read).
    public init(order: Order? = nil, startAt: LeafValue? = nil, endAt: LeafValue? = nil, equalTo: LeafValue? = nil,
                limitToFirst: Int? = nil, limitToLast: Int? = nil) {
        self.order = order
        self.startAt = startAt
        self.endAt = endAt
        self.equalTo = equalTo
        self.limitToFirst = limitToFirst
        self.limitToLast = limitToLast
    }

    /// A plain read of a location.
    public static let plain = RuleQuery()

    func value(of property: QueryProperty) -> RuleValue {
        func leaf(_ value: LeafValue?) -> RuleValue { value.map { RuleValue(Node($0)) } ?? .null }
        switch property {
        case .orderByKey: return .bool(order == nil || order == .key)
        case .orderByValue: return .bool(order == .value)
        case .orderByPriority: return .bool(order == .priority)
        case .orderByChild:
            if case .child(let path)? = order { return .string(path) }
            return .null
        case .startAt: return leaf(startAt)
        case .endAt: return leaf(endAt)
        case .equalTo: return leaf(equalTo)
        case .limitToFirst: return limitToFirst.map { .number(Double($0)) } ?? .null
        case .limitToLast: return limitToLast.map { .number(Double($0)) } ?? .null
        }
    }
}
