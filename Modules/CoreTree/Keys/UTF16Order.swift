/// Compares strings by UTF-16 code units, the order Firebase uses for non-integer keys.
///
/// Swift's `String <` compares by Unicode canonical equivalence, which differs. Comparing UTF-8
/// bytes gives code-point order, which equals UTF-16 order except where a character in
/// U+E000...U+FFFF meets one above U+FFFF: UTF-16 puts the latter (a surrogate pair, 0xD800...)
/// first. That case is recognised from the first differing byte, so the comparison stays a
/// byte scan with no decoding.
public enum UTF16Order {
    /// Three-way comparison by UTF-16 code units: negative, zero or positive.
    @inlinable
    public static func compare(_ lhs: String, _ rhs: String) -> Int {
        var left = lhs
        var right = rhs
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                compare(utf8: leftBytes, rightBytes)
            }
        }
    }

    /// Three-way comparison of two valid UTF-8 sequences by their UTF-16 code units.
    @inlinable
    public static func compare(utf8 lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let common = Swift.min(lhs.count, rhs.count)
        var index = 0
        while index < common {
            let a = lhs[index]
            let b = rhs[index]
            if a != b {
                // Lead bytes 0xEE/0xEF start U+E000...U+FFFF; 0xF0...0xF4 start supplementary
                // characters, whose UTF-16 form (a surrogate) sorts below U+E000.
                if a >= 0xEE && a <= 0xEF && b >= 0xF0 { return 1 }
                if b >= 0xEE && b <= 0xEF && a >= 0xF0 { return -1 }
                return a < b ? -1 : 1
            }
            index += 1
        }
        return lhs.count == rhs.count ? 0 : (lhs.count < rhs.count ? -1 : 1)
    }
}
