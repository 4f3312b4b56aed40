/// A primitive value stored at a leaf of the tree.
///
/// Numbers are IEEE-754 doubles, as on the wire and in node hashes. An integral number whose
/// magnitude is at most 2^53 is printed without a fraction and bridges to Foundation as an integer.
public enum LeafValue: Sendable, Hashable {
    /// `true` or `false`.
    case bool(Bool)
    /// A finite number.
    case number(Double)
    /// A string of at most 10 MB (UTF-8).
    case string(String)

    /// The largest magnitude at which every integer is exactly representable as a double (2^53).
    public static let maxSafeInteger: Double = 9_007_199_254_740_992

    /// The number as an integer when it is integral and within ±2^53, otherwise `nil`.
    @inlinable
    public static func exactInteger(_ number: Double) -> Int64? {
        guard number.rounded(.towardZero) == number, abs(number) <= maxSafeInteger else { return nil }
        return Int64(number)
    }
}

/// A node's priority: a number or a string. A node without priority has `nil`.
///
/// In priority order, nodes without priority come first, then numbers ascending, then strings
/// by UTF-16 code units.
public enum Priority: Sendable, Hashable {
    /// A finite numeric priority.
    case number(Double)
    /// A string priority.
    case string(String)

    /// Three-way comparison in priority order; `nil` (no priority) sorts first.
    public static func compare(_ lhs: Priority?, _ rhs: Priority?) -> Int {
        switch (lhs, rhs) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (.number(a)?, .number(b)?): return a < b ? -1 : (a > b ? 1 : 0)
        case (.number?, .string?): return -1
        case (.string?, .number?): return 1
        case let (.string(a)?, .string(b)?): return UTF16Order.compare(a, b)
        }
    }

    /// The priority as a leaf node (used by the priority index and `.priority` children).
    public var node: Node {
        switch self {
        case .number(let value): Node(.number(value))
        case .string(let value): Node(.string(value))
        }
    }
}
