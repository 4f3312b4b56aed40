@testable import CoreTree

/// Random inputs for the property tests. Everything draws from a caller-supplied seeded generator.
enum Gen {
    /// Keys that look like integers, including every edge of the 32-bit integer rule.
    static let integerLikeKeys = [
        "0", "1", "-1", "5", "-5", "9", "10", "42", "-42", "100", "2147483647", "2147483648",
        "-2147483648", "-2147483649", "4294967296", "99999999999", "-99999999999", "007", "-007",
        "-0", "00", "01", "-01", "+1", "1a", "1.0", "1e3", " 1", "12345678901", "-1234567890",
        "1234567890", "0000000001", "-", "--1",
    ]

    /// Characters chosen to stress UTF-16 order: ASCII, Latin-1, combining marks, CJK, the private
    /// use area and the top of the BMP (U+E000...U+FFFF), and supplementary-plane characters.
    static let interestingScalars: [Unicode.Scalar] = [
        "a", "b", "z", "A", "Z", "0", "9", "-", "_", " ", "~", "!", ",", "é", "e", "\u{301}", "ß",
        "ÿ", "Ā", "中", "日", "\u{D7FF}", "\u{E000}", "\u{E001}", "\u{F8FF}", "\u{FB01}", "\u{FEFF}",
        "\u{FFFD}", "\u{FFFF}", "\u{10000}", "😀", "🐵", "🌴", "✔", "\u{1F600}", "\u{10FFFF}", "𝄞",
    ]

    static func scalar(using random: inout some RandomNumberGenerator) -> Unicode.Scalar {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            return random.pick(interestingScalars)
        case 5..<7:
            return Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random))
        case 7:
            return Unicode.Scalar(UInt32.random(in: 0xE000...0xFFFF, using: &random))!
        case 8:
            return Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &random))!
        default:
            return Unicode.Scalar(UInt32.random(in: 0x80...0xD7FF, using: &random))!
        }
    }

    static func string(length: ClosedRange<Int>, using random: inout some RandomNumberGenerator) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: length, using: &random) { scalars.append(scalar(using: &random)) }
        return String(scalars)
    }

    /// Any key, valid or not: integer-like strings, random integers and random Unicode strings.
    static func anyKey(using random: inout some RandomNumberGenerator) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<3:
            return random.pick(integerLikeKeys)
        case 3:
            return String(Int.random(in: -3_000_000_000...3_000_000_000, using: &random))
        case 4:
            return String(Int.random(in: -20...20, using: &random))
        case 5:
            // A prefix of another interesting key, so that shared prefixes are common.
            let base = random.pick(integerLikeKeys)
            return base + string(length: 0...2, using: &random)
        default:
            return string(length: 0...6, using: &random)
        }
    }

    /// A key that passes ``Validation/validateKey(_:)`` (by construction, not by asking it).
    static func validKey(using random: inout some RandomNumberGenerator) -> String {
        while true {
            let key = anyKey(using: &random)
            if !key.isEmpty && !key.unicodeScalars.contains(where: { ".#$[]/".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }) {
                return key
            }
        }
    }

    /// A number drawn from integers, simple fractions, tiny and huge magnitudes and random bit patterns.
    static func number(using random: inout some RandomNumberGenerator) -> Double {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return random.pick([0.1, 1e-7, 1e300, -1e300, 0.5, -0.1, 1.5, 3.141592653589793, .leastNonzeroMagnitude, .leastNormalMagnitude, 1.7976931348623157e308])
        case 1: return Double(Int.random(in: -1_000...1_000, using: &random))
        case 2: return Double(Int64.random(in: -(1 << 53)...(1 << 53), using: &random))
        case 3: return random.pick([9_007_199_254_740_992, -9_007_199_254_740_992, 9_007_199_254_740_994, 1e16, 2147483648, -2147483649])
        case 4: return Double.random(in: -1...1, using: &random)
        case 5: return Double.random(in: -1e6...1e6, using: &random)
        default:
            while true {
                let value = Double(bitPattern: random.next())
                if value.isFinite { return value }
            }
        }
    }

    /// A string value with escapes, control characters and Unicode.
    static func stringValue(using random: inout some RandomNumberGenerator) -> String {
        if random.chance(0.3) {
            return random.pick(["", "\"", "\\", "\"quoted\" \\ back", "line\nbreak\ttab\r", "\u{0}\u{1}\u{1F}\u{7F}", "/slash/", "\u{2028}\u{2029}", "unicode ✔ 🐵 🌴 x͢", "\u{FEFF}bom"])
        }
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            if random.chance(0.1) {
                scalars.append(Unicode.Scalar(UInt8.random(in: 0...0x1F, using: &random)))
            } else {
                scalars.append(scalar(using: &random))
            }
        }
        return String(scalars)
    }

    static func leaf(using random: inout some RandomNumberGenerator) -> LeafValue {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return .bool(random.chance(0.5))
        case 1, 2: return .number(number(using: &random))
        default: return .string(stringValue(using: &random))
        }
    }

    static func priority(using random: inout some RandomNumberGenerator) -> Priority? {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return .number(number(using: &random))
        case 1: return .string(stringValue(using: &random))
        default: return nil
        }
    }

    /// A random tree. Keys avoid the export-format names `.value` and `.priority`; with
    /// `validKeys` they also pass key validation.
    static func node(
        depth: Int, maxWidth: Int = 5, priorities: Bool = true, validKeys: Bool = false,
        using random: inout some RandomNumberGenerator
    ) -> Node {
        let priority = priorities ? self.priority(using: &random) : nil
        if depth == 0 || random.chance(0.35) {
            if random.chance(0.05) { return .empty }
            return Node(leaf(using: &random), priority: priority)
        }
        var pairs: [(key: ChildKey, value: Node)] = []
        let arrayLike = random.chance(0.25)
        for index in 0..<Int.random(in: 1...maxWidth, using: &random) {
            var key: String
            if arrayLike {
                key = String(index * Int.random(in: 1...2, using: &random))
            } else {
                repeat {
                    key = validKeys ? validKey(using: &random) : anyKey(using: &random)
                } while key == ".value" || key == ".priority"
            }
            pairs.append((ChildKey(key), node(depth: depth - 1, maxWidth: maxWidth, priorities: priorities, validKeys: validKeys, using: &random)))
        }
        return Node(children: pairs, priority: priority)
    }
}

/// An independent statement of Firebase key order, written from the specification rather than
/// from the implementation: 32-bit integer keys first by value (shorter string first on a tie),
/// then every other key by UTF-16 code units.
enum ReferenceKeyOrder {
    /// The integer a key denotes: optional `-`, ASCII digits, no leading zero, not `-0`, 32-bit.
    static func integerValue(_ key: String) -> Int64? {
        var characters = Array(key)
        var negative = false
        if characters.first == "-" {
            negative = true
            characters.removeFirst()
        }
        guard !characters.isEmpty, characters.count <= 10 else { return nil }
        guard characters.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if characters.first == "0" && (characters.count > 1 || negative) { return nil }
        guard let magnitude = Int64(String(characters)) else { return nil }
        let value = negative ? -magnitude : magnitude
        return (Int64(Int32.min)...Int64(Int32.max)).contains(value) ? value : nil
    }

    /// -1, 0 or 1.
    static func compare(_ a: String, _ b: String) -> Int {
        switch (integerValue(a), integerValue(b)) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            return a.utf16.count == b.utf16.count ? 0 : (a.utf16.count < b.utf16.count ? -1 : 1)
        case (_?, nil): return -1
        case (nil, _?): return 1
        case (nil, nil): return compareUTF16(a, b)
        }
    }

    /// Lexicographic comparison of `Array(s.utf16)`.
    static func compareUTF16(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf16)
        let y = Array(b.utf16)
        if x == y { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }
}

/// The sign of a three-way comparison result: -1, 0 or 1.
func orderSign(_ value: Int) -> Int { value < 0 ? -1 : (value > 0 ? 1 : 0) }
