import Testing
import TestSupport
@testable import CoreTree

@Suite("JSON")
struct JSONRoundTripTests {
    @Test("export format round-trips random trees", arguments: [1, 2, 3, 4] as [UInt64])
    func exportRoundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<150 {
            let node = Gen.node(depth: Int.random(in: 0...5, using: &random), using: &random)
            for format: JSONFormat in [.export, [.export, .prettyPrinted], [.priorities, .arrays]] {
                let text = node.jsonString(format: format)
                let parsed = try Node(jsonString: text)
                #expect(parsed == node, "format \(format.rawValue): \(text)")
                #expect(try Node(json: node.jsonBytes(format: format)) == node)
                // Writing is deterministic: the parsed node writes the same text.
                #expect(parsed.jsonString(format: format) == text)
            }
        }
    }

    @Test("plain format round-trips the priority-stripped tree", arguments: [5, 6, 7] as [UInt64])
    func plainRoundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<150 {
            let node = Gen.node(depth: Int.random(in: 0...5, using: &random), using: &random)
            let stripped = node.strippingPriorities()
            for format: JSONFormat in [.plain, [.plain, .prettyPrinted]] {
                let text = node.jsonString(format: format)
                #expect(try Node(jsonString: text) == stripped, "\(text)")
                #expect(text == stripped.jsonString(format: format))
            }
        }
    }

    @Test("numbers keep every bit through a round trip", arguments: [8, 9] as [UInt64])
    func numbers(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let value = Gen.number(using: &random)
            let text = num(value).jsonString()
            let parsed = try #require(try Node(jsonString: text).leafValue)
            guard case .number(let back) = parsed else {
                Issue.record("\(text) did not parse to a number")
                continue
            }
            // -0 is written as 0; every other double keeps its exact bits.
            #expect(back == value && (value == 0 || back.bitPattern == value.bitPattern), "\(value) -> \(text) -> \(back)")
            if let integer = Int64(exactly: value), abs(value) <= 9_007_199_254_740_992 {
                #expect(text == String(integer))
            } else {
                #expect(text.contains(".") || text.contains("e"), "\(text) should not look like a safe integer")
            }
        }
    }

    @Test("number forms")
    func numberForms() throws {
        #expect(json("1.0") == num(1))
        #expect(json("1.0").jsonString() == "1")
        #expect(json("1e2").jsonString() == "100")
        #expect(json("-0").jsonString() == "0")
        #expect(json("9007199254740992").jsonString() == "9007199254740992")
        #expect(json("-9007199254740992").jsonString() == "-9007199254740992")
        #expect(json("1.5").jsonString() == "1.5")
        #expect(json("0.1").jsonString() == "0.1")
        #expect(json("1E-7") == num(1e-7))
        #expect(json("12345678901234567890") == num(12345678901234567890.0))
        #expect(json("-2.5e+3") == num(-2500))
        #expect(json("123456789012345") == num(123456789012345))
        #expect(num(1e300).jsonString() == "1e+300")
        expectCoreTreeError(.invalidValue) { _ = try Node(jsonString: "1e400") }
        expectCoreTreeError(.invalidValue) { _ = try Node(jsonString: "-1e400") }
    }

    @Test("export form of a leaf with priority")
    func exportLeaf() throws {
        let node = json(#"{".value": 5, ".priority": 1}"#)
        #expect(node == num(5, priority: .number(1)))
        #expect(node.jsonString(format: .export) == #"{".value":5,".priority":1}"#)
        #expect(node.jsonString(format: .plain) == "5")
        #expect(try Node(jsonString: node.jsonString(format: .export)) == node)
        #expect(json(#"{".priority": "p", ".value": "s"}"#) == str("s", priority: .string("p")))
        #expect(json(#"{".value": {"a": 1}, ".priority": 2}"#) == tree(["a": num(1)], priority: .number(2)))
        #expect(json(#"{".value": 5, ".priority": null}"#) == num(5))
        #expect(json(#"{".value": 5, "a": null}"#) == num(5))
        #expect(json(#"{"a": 1, ".priority": "x"}"#).jsonString(format: .export) == #"{"a":1,".priority":"x"}"#)
        #expect(json(#"{".value": null}"#) == .empty)
    }

    @Test("null members vanish; {} and [] are empty")
    func nulls() {
        #expect(json("null") == .empty)
        #expect(json("{}") == .empty)
        #expect(json("[]") == .empty)
        #expect(json("[null, null]") == .empty)
        #expect(json(#"{"a": null}"#) == .empty)
        #expect(json(#"{"a": null, "b": 1}"#) == json(#"{"b": 1}"#))
        #expect(json(#"{"a": {"b": null}, "c": {}}"#) == .empty)
        #expect(json(#"{"a": null, ".priority": 1}"#) == .empty)
        #expect(json(#"{".priority": 1}"#) == .empty)
        #expect(Node.empty.jsonString() == "null")
        #expect(Node.empty.jsonString(format: .export) == "null")
        #expect(json(#"{"a": 1, "a": 2}"#) == json(#"{"a": 2}"#), "the last duplicate member wins")
        #expect(json(#"{"a": 1, "a": null}"#) == .empty)
    }

    @Test("strings: escapes, control characters and Unicode")
    func strings() throws {
        #expect(json(#""a\"b\\c\/d\b\f\n\r\t""#) == str("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(json(#""\u00e9\u00E9""#) == str("éé"))
        #expect(json(#""\ud83d\ude00""#) == str("😀"))
        #expect(json(#""\uE000""#) == str("\u{E000}"))
        #expect(json("\"✔ 🐵\"") == str("✔ 🐵"))
        #expect(str("\u{0}\u{1F}\u{7F}").jsonString() == #""\u0000\u001f\u007f""#)
        #expect(str("q\"\\\n\r\t").jsonString() == #""q\"\\\n\r\t""#)
        #expect(json(#"{"k\u002e": 1}"#).firstChildKey == "k.")
        #expect(json(" \n\t{ \"a\" : [ 1 , 2 ] } \r\n") == json(#"{"a":{"0":1,"1":2}}"#))
        #expect(json("true") == bool(true) && json("false") == bool(false))
    }

    @Test("malformed documents throw malformedJSON", arguments: [
        "", " ", "{", "[", #"{"a":1"#, #"{"a":1,"#, "[1,2", #"{"a"}"#, #"{"a" 1}"#, #"{"a":}"#, #"{,}"#,
        #"{"a":1,}"#, "[1,]", "[,1]", "{} x", "1 2", "nullx", "[1]]", "01", "-01", "00", "-", "--1", "+1",
        ".5", "1.", "1.e3", "1e", "1e+", "0x10", "tru", "nul", "True", "NaN", "Infinity", "'a'", #""abc"#,
        #""\q""#, #""\x41""#, #""\u12""#, #""\u12G4""#, #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
        #""\ud800x""#, "\"a\u{1}b\"", "\"a\nb\"", "\"tab\there\"", #"{1: 2}"#, #"{"a":1 "b":2}"#, "\"\\",
    ])
    func malformed(text: String) {
        expectCoreTreeError(.malformedJSON, "\(text.debugDescription)") { _ = try Node(jsonString: text) }
        expectCoreTreeError(.malformedJSON, "\(text.debugDescription)") { _ = try Node(json: Array(text.utf8)) }
    }

    @Test("invalid UTF-8 inside a string is malformed")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]] {
            expectCoreTreeError(.malformedJSON) { _ = try Node(json: bytes) }
        }
    }

    @Test("nesting is limited to 512 levels")
    func nesting() throws {
        let limit = JSONParser.maxNesting
        #expect(limit == 512)
        let arrays = String(repeating: "[", count: limit) + "1" + String(repeating: "]", count: limit)
        let deepArray = try Node(jsonString: arrays)
        #expect(deepArray.child(at: TreePath(keys: Array(repeating: "0", count: limit))) == num(1))
        let objects = String(repeating: #"{"a":"#, count: limit) + "1" + String(repeating: "}", count: limit)
        #expect(try Node(jsonString: objects).child(at: TreePath(keys: Array(repeating: "a", count: limit))) == num(1))

        let tooDeep = String(repeating: "[", count: limit + 1) + "1" + String(repeating: "]", count: limit + 1)
        expectCoreTreeError(.malformedJSON) { _ = try Node(jsonString: tooDeep) }
        let tooDeepObjects = String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1)
        expectCoreTreeError(.malformedJSON) { _ = try Node(jsonString: tooDeepObjects) }
        // Far deeper input fails cleanly rather than exhausting the stack.
        expectCoreTreeError(.malformedJSON) { _ = try Node(jsonString: String(repeating: "[", count: 100_000)) }
    }

    @Test("`.value` beside children and bad priorities are rejected")
    func exportFormatErrors() {
        expectCoreTreeError(.invalidValue) { _ = try Node(jsonString: #"{".value": 1, "a": 2}"#) }
        expectCoreTreeError(.invalidValue) { _ = try Node(jsonString: #"{"a": 2, ".value": 1}"#) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(jsonString: #"{".priority": true, "a": 1}"#) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(jsonString: #"{".priority": {"x": 1}, "a": 1}"#) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(jsonString: #"{".value": 1, ".priority": [1]}"#) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(jsonString: #"{"x": {".priority": false, ".value": 1}}"#) }
    }

    @Test("non-contiguous byte sequences parse too")
    func nonContiguousBytes() throws {
        let text = #"{"a": [1, "two", {"b": true}]}"#
        let lazyBytes = text.utf8.lazy.map { $0 }
        #expect(try Node(json: lazyBytes) == json(text))
    }

    @Test("pretty printing indents by two spaces")
    func prettyPrinting() {
        let node = json(#"{"a": 1, "b": [true, null, "x"]}"#)
        #expect(node.jsonString(format: [.arrays, .prettyPrinted]) == "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null,\n    \"x\"\n  ]\n}")
    }
}
