public import CoreTree

/// A position in an index's order: the index value (or a sentinel) then the key.
///
/// Values compare as the Firebase clients compare them: null, then false, true, numbers, strings,
/// then objects (all objects equal); ties go to key order.
public struct IndexKey: ThreeWayComparable, Sendable, CustomStringConvertible {
    /// An index value, or a sentinel before or after every value.
    public enum Value: Sendable {
        /// Before every value.
        case min
        /// A real value.
        case node(Node)
        /// After every value.
        case max
    }

    /// The value ordered by.
    public var value: Value
    /// The key that breaks ties.
    public var name: ChildKey

    /// Creates a position.
    @inlinable
    public init(value: Value, name: ChildKey) {
        self.value = value
        self.name = name
    }

    @inlinable
    public static func compare(_ lhs: IndexKey, _ rhs: IndexKey) -> Int {
        let order = compareValues(lhs.value, rhs.value)
        return order != 0 ? order : ChildKey.compare(lhs.name, rhs.name)
    }

    @inlinable
    public static func < (lhs: IndexKey, rhs: IndexKey) -> Bool { compare(lhs, rhs) < 0 }

    @inlinable
    public static func == (lhs: IndexKey, rhs: IndexKey) -> Bool { compare(lhs, rhs) == 0 }

    @inlinable
    static func compareValues(_ lhs: Value, _ rhs: Value) -> Int {
        switch (lhs, rhs) {
        case (.min, .min), (.max, .max): return 0
        case (.min, _), (_, .max): return -1
        case (_, .min), (.max, _): return 1
        case let (.node(a), .node(b)): return IndexKey.compareNodes(a, b)
        }
    }

    /// Orders index values: empty, then bool, number, string leaves, then children nodes (all equal).
    public static func compareNodes(_ lhs: Node, _ rhs: Node) -> Int {
        let leftRank = rank(lhs)
        let rightRank = rank(rhs)
        if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
        switch (lhs.leafValue, rhs.leafValue) {
        case let (.bool(a)?, .bool(b)?): return a == b ? 0 : (a ? 1 : -1)
        case let (.number(a)?, .number(b)?): return a < b ? -1 : (a > b ? 1 : 0)
        case let (.string(a)?, .string(b)?): return UTF16Order.compare(a, b)
        default: return 0
        }
    }

    @inlinable
    static func rank(_ node: Node) -> Int {
        switch node.leafValue {
        case nil: node.isEmpty ? 0 : 5
        case .bool?: 1
        case .number?: 2
        case .string?: 3
        }
    }

    public var description: String {
        switch value {
        case .min: "(MIN, \(name))"
        case .max: "(MAX, \(name))"
        case .node(let node): "(\(node), \(name))"
        }
    }
}
