import Testing
import TestSupport
@testable import CoreTree

@Suite("Child key order")
struct ChildKeyOrderTests {
    @Test("integer keys are recognised by the 32-bit rule")
    func integerRecognition() {
        let integers: [String: Int] = [
            "0": 0, "1": 1, "-1": -1, "-5": -5, "42": 42, "2147483647": 2_147_483_647,
            "-2147483648": -2_147_483_648, "1234567890": 1_234_567_890,
        ]
        for (key, value) in integers {
            #expect(ChildKey(key).intValue == value, "\(key) should be the integer \(value)")
        }
        let strings = [
            "-0", "00", "007", "01", "-01", "2147483648", "-2147483649", "4294967296", "12345678901",
            "", "-", "+1", "1a", " 1", "1 ", "1.0", "1e3", "０", "٣", "--1", "0x1",
        ]
        for key in strings {
            #expect(ChildKey(key).intValue == nil, "\(key) should be a string key")
        }
    }

    @Test("random keys order as the brute-force reference says", arguments: [1, 2, 3] as [UInt64])
    func randomKeysMatchReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let strings = (0..<600).map { _ in Gen.anyKey(using: &random) } + Gen.integerLikeKeys
        let keys = strings.map { ChildKey($0) }
        for _ in 0..<20_000 {
            let i = Int.random(in: 0..<keys.count, using: &random)
            let j = Int.random(in: 0..<keys.count, using: &random)
            let expected = ReferenceKeyOrder.compare(strings[i], strings[j])
            let actual = orderSign(ChildKey.compare(keys[i], keys[j]))
            #expect(actual == expected, "compare(\(strings[i].debugDescription), \(strings[j].debugDescription))")
            #expect((keys[i] < keys[j]) == (expected < 0))
            #expect((keys[i] == keys[j]) == (expected == 0), "== must agree with compare for \(strings[i].debugDescription), \(strings[j].debugDescription)")
            if keys[i] == keys[j] { #expect(keys[i].hashValue == keys[j].hashValue) }
        }
        // Sorting with ChildKey gives the reference order.
        let sortedByKey = keys.sorted().map { bytes($0.stringValue) }
        let sortedByReference = strings.sorted { ReferenceKeyOrder.compare($0, $1) < 0 }.map(bytes)
        #expect(sortedByKey == sortedByReference)
    }

    @Test("a hand-written list sorts into the documented order")
    func handWrittenOrder() {
        let expected = [
            "-2147483648", "-5", "-1", "0", "1", "9", "10", "2147483647",
            "-0", "-2147483649", "00", "007", "2147483648", "Z", "a", "b", "é", "😀", "\u{E000}", "\u{FFFF}",
        ]
        var random = SplitMix64(seed: 99)
        for _ in 0..<20 {
            let shuffled = expected.shuffled(using: &random).map { ChildKey($0) }
            #expect(shuffled.sorted().map(\.stringValue) == expected)
        }
    }

    @Test("equal integer values put the shorter string first")
    func integerTieBreak() {
        // Only canonical strings are integer keys, so a tie between two integer keys means equal strings.
        #expect(ChildKey.compare("7", "7") == 0)
        #expect(ChildKey("7") < ChildKey("07"))
        #expect(ChildKey("-7") < ChildKey("-07"))
        #expect(ChildKey("2147483647") < ChildKey("2147483648"))
        #expect(ChildKey("-2147483648") < ChildKey("-2147483649"))
    }

    @Test("the MIN and MAX sentinels bracket every key")
    func sentinels() {
        var random = SplitMix64(seed: 7)
        let keys = (0..<500).map { _ in ChildKey(Gen.anyKey(using: &random)) }
            + ["[MIN_NAME]", "[MAX_NAME]", "", "0", "-2147483648", "\u{10FFFF}", "\u{FFFF}"].map { ChildKey($0) }
        for key in keys {
            #expect(ChildKey.min < key)
            #expect(key < ChildKey.max)
            #expect(ChildKey.compare(.min, key) < 0)
            #expect(ChildKey.compare(key, .max) < 0)
            #expect(ChildKey.compare(.max, key) > 0)
            #expect(key != .min && key != .max)
        }
        #expect(ChildKey.compare(.min, .min) == 0)
        #expect(ChildKey.compare(.max, .max) == 0)
        #expect(ChildKey.min < ChildKey.max)
        #expect(ChildKey.min.isMin && !ChildKey.min.isMax)
        #expect(ChildKey.max.isMax && !ChildKey.max.isMin)
        #expect(!ChildKey("[MIN_NAME]").isMin)
        #expect(ChildKey.min.stringValue == "[MIN_NAME]")
        #expect(ChildKey.max.stringValue == "[MAX_NAME]")
    }

    @Test("keys that are canonically equivalent but spelled differently are distinct keys")
    func canonicalEquivalenceDoesNotMerge() {
        let composed = ChildKey("\u{E9}")  // é
        let decomposed = ChildKey("e\u{301}")  // e + combining acute
        #expect(ChildKey.compare(decomposed, composed) < 0)
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        let node = tree([composed: num(1), decomposed: num(2)])
        #expect(node.childCount == 2)
        #expect(node.immediateChild(composed) == num(1))
        #expect(node.immediateChild(decomposed) == num(2))
    }

    @Test("UTF16Order puts U+E000...U+FFFF after supplementary characters, unlike String <")
    func utf16OrderAgainstSwiftOrder() {
        #expect(UTF16Order.compare("\u{E000}", "😀") > 0)
        #expect(UTF16Order.compare("😀", "\u{E000}") < 0)
        #expect(UTF16Order.compare("\u{FFFF}", "\u{10000}") > 0)
        #expect(UTF16Order.compare("a\u{E000}", "a😀b") > 0)
        #expect(UTF16Order.compare("\u{D7FF}", "😀") < 0)  // below the surrogates: code point order
        // Swift's String < orders by scalar value and says the opposite.
        #expect("\u{E000}" < "😀")
        #expect(!("\u{E000}" < "😀") == (UTF16Order.compare("\u{E000}", "😀") < 0))
        // Swift treats canonically equivalent strings as equal; UTF-16 order does not.
        #expect("e\u{301}" == "\u{E9}")
        #expect(UTF16Order.compare("e\u{301}", "\u{E9}") < 0)
        #expect(UTF16Order.compare("", "") == 0)
        #expect(UTF16Order.compare("", "a") < 0)
        #expect(UTF16Order.compare("ab", "a") > 0)
        #expect(UTF16Order.compare("😀", "😀") == 0)
    }

    @Test("UTF16Order agrees with comparing Array(s.utf16) on random strings")
    func utf16OrderRandom() {
        var random = SplitMix64(seed: 11)
        var differsFromSwift = 0
        for _ in 0..<20_000 {
            let a = Gen.string(length: 0...4, using: &random)
            let b = random.chance(0.2) ? a + Gen.string(length: 0...2, using: &random) : Gen.string(length: 0...4, using: &random)
            let expected = ReferenceKeyOrder.compareUTF16(a, b)
            #expect(orderSign(UTF16Order.compare(a, b)) == expected, "\(a.debugDescription) vs \(b.debugDescription)")
            if (a < b) != (expected < 0) { differsFromSwift += 1 }
        }
        // The generator is built to hit the cases where the two orders differ.
        #expect(differsFromSwift > 0)
    }

    @Test("special keys")
    func specialKeys() {
        #expect(ChildKey.priority.isPriorityKey)
        #expect(ChildKey(".priority").isPriorityKey)
        #expect(!ChildKey("priority").isPriorityKey)
        #expect(!ChildKey.max.isPriorityKey)
        #expect(ChildKey.info.stringValue == ".info")
        #expect(ChildKey.serverValue.stringValue == ".sv")
        #expect(ChildKey.value.stringValue == ".value")
        let literal: ChildKey = "12"
        #expect(literal.intValue == 12)
        #expect(literal.description == "12")
    }
}
