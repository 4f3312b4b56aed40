/// A comparable type that can compare two values in one call, returning negative, zero or positive.
///
/// ``SortedMap`` uses this so that each step down the tree costs one comparison, not two.
public protocol ThreeWayComparable: Comparable {
    /// Compares two values: negative when `lhs < rhs`, zero when equal, positive when `lhs > rhs`.
    static func compare(_ lhs: Self, _ rhs: Self) -> Int
}

extension ThreeWayComparable {
    /// The default comparison, built from `<`.
    @inlinable
    public static func compare(_ lhs: Self, _ rhs: Self) -> Int {
        lhs < rhs ? -1 : (rhs < lhs ? 1 : 0)
    }
}

extension ChildKey: ThreeWayComparable {}
extension String: ThreeWayComparable {}
extension Int: ThreeWayComparable {}
