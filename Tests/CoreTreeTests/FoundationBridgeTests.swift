import Foundation
import TestSupport
import Testing
@testable import CoreTree

@Suite("Foundation bridge")
struct FoundationBridgeTests {
    @Test("leaves bridge to Bool, integers, doubles and strings")
    func leavesOut() {
        #expect(bool(true).foundationValue() as? Bool == true)
        #expect(bool(false).foundationValue() as? Bool == false)
        #expect(num(42).foundationValue() as? Int == 42)
        #expect(num(-7).foundationValue() as? Int == -7)
        #expect(num(42).foundationValue() as? Double == 42)
        #expect(num(9_007_199_254_740_992).foundationValue() as? Int == 9_007_199_254_740_992)
        #expect(num(1.5).foundationValue() as? Double == 1.5)
        #expect(num(1.5).foundationValue() as? Int == nil)
        #expect(num(1e300).foundationValue() as? Double == 1e300)
        #expect(num(0.1).foundationValue() as? Double == 0.1)
        #expect(str("hi ✔").foundationValue() as? String == "hi ✔")
        #expect(Node.empty.foundationValue() is NSNull)
        #expect(Node.empty.foundationValue(exportFormat: true) is NSNull)
    }

    @Test("children bridge to [String: Any]")
    func childrenOut() throws {
        let node = json(#"{"a": 1, "b": {"c": "x", "d": true}, ".priority": 4}"#)
        let value = try #require(node.foundationValue() as? [String: Any])
        #expect(Set(value.keys) == ["a", "b"])
        #expect(value["a"] as? Int == 1)
        let b = try #require(value["b"] as? [String: Any])
        #expect(b["c"] as? String == "x")
        #expect(b["d"] as? Bool == true)

        let export = try #require(node.foundationValue(exportFormat: true) as? [String: Any])
        #expect(export[".priority"] as? Int == 4)
        let leaf = try #require(num(5, priority: .string("p")).foundationValue(exportFormat: true) as? [String: Any])
        #expect(leaf[".value"] as? Int == 5)
        #expect(leaf[".priority"] as? String == "p")
        #expect(num(5, priority: .string("p")).foundationValue() as? Int == 5)
    }

    @Test("values convert in: dictionaries, arrays, numbers, strings, nulls and optionals")
    func valuesIn() throws {
        let optionalString: String? = "opt"
        let missing: Int? = nil
        let nestedOptional: Int?? = 3
        let input: [String: Any] = [
            "bool": NSNumber(value: true),
            "false": NSNumber(value: false),
            "one": NSNumber(value: 1),
            "half": NSNumber(value: 0.5),
            "int": 12,
            "int64": Int64(-9_000_000_000),
            "uint8": UInt8(200),
            "float": Float(0.25),
            "double": 2.5,
            "swiftBool": true,
            "string": "s",
            "null": NSNull(),
            "optional": optionalString as Any,
            "missing": missing as Any,
            "nestedOptional": nestedOptional as Any,
            "array": [1, "two", [3.5, NSNull()], ["k": "v"]] as [Any],
            "sparse": [nil, 1, nil] as [Any?],
            "nsarray": NSArray(array: [1, 2]),
            "nsdictionary": NSDictionary(dictionary: ["x": 1]),
            "leaf": [".value": 5, ".priority": 1] as [String: Any],
            "prioritised": ["a": 1, ".priority": "p"] as [String: Any],
            "node": num(9),
        ]
        let node = try Node(foundationValue: input)
        let expected = json(#"""
        {
          "bool": true, "false": false, "one": 1, "half": 0.5, "int": 12, "int64": -9000000000,
          "uint8": 200, "float": 0.25, "double": 2.5, "swiftBool": true, "string": "s",
          "optional": "opt", "nestedOptional": 3,
          "array": {"0": 1, "1": "two", "2": {"0": 3.5}, "3": {"k": "v"}},
          "sparse": {"1": 1}, "nsarray": [1, 2], "nsdictionary": {"x": 1},
          "leaf": {".value": 5, ".priority": 1}, "prioritised": {"a": 1, ".priority": "p"}, "node": 9
        }
        """#)
        #expect(node == expected, "\(node)")
        #expect(node.immediateChild("bool").leafValue == .bool(true))
        #expect(node.immediateChild("one").leafValue == .number(1))
        #expect(!node.hasChild("null") && !node.hasChild("missing"))

        #expect(try Node(foundationValue: nil) == .empty)
        #expect(try Node(foundationValue: NSNull()) == .empty)
        #expect(try Node(foundationValue: missing) == .empty)
        #expect(try Node(foundationValue: Optional<Any>.none) == .empty)
        #expect(try Node(foundationValue: [String: Any]()) == .empty)
        #expect(try Node(foundationValue: [Any]()) == .empty)
        #expect(try Node(foundationValue: ["a": NSNull()]) == .empty)
        #expect(try Node(foundationValue: [".value": NSNull(), ".priority": 1] as [String: Any]) == .empty)
        #expect(try Node(foundationValue: Int8(-3)) == num(-3))
        #expect(try Node(foundationValue: NSNumber(value: Int8(5))) == num(5))
        #expect(try Node(foundationValue: "x") == str("x"))
    }

    @Test("unsupported types, non-finite numbers and bad priorities throw")
    func errors() {
        expectCoreTreeError(.unsupportedType) { _ = try Node(foundationValue: Date()) }
        expectCoreTreeError(.unsupportedType) { _ = try Node(foundationValue: ["a": ["b": Data()]] as [String: Any]) }
        expectCoreTreeError(.unsupportedType) { _ = try Node(foundationValue: [URL(fileURLWithPath: "/")] as [Any]) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: Double.nan) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: Double.infinity) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: -Float.infinity) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: NSNumber(value: Double.nan)) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: ["a": [1, Double.nan]] as [String: Any]) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: [".value": 1, "a": 2] as [String: Any]) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(foundationValue: ["a": 1, ".priority": true] as [String: Any]) }
        expectCoreTreeError(.invalidPriority) { _ = try Node(foundationValue: ["a": 1, ".priority": ["x": 1]] as [String: Any]) }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: ["a": 1, ".priority": Double.nan] as [String: Any]) }
        // Nesting beyond the parser's limit (or a cycle) is refused, not a stack overflow.
        var deep: Any = 1
        for _ in 0..<600 { deep = [deep] as [Any] }
        expectCoreTreeError(.invalidValue) { _ = try Node(foundationValue: deep) }
    }

    @Test("node -> foundationValue(exportFormat: true) -> node is the identity", arguments: [1, 2, 3] as [UInt64])
    func exportRoundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<150 {
            let node = Gen.node(depth: Int.random(in: 0...5, using: &random), using: &random)
            let back = try Node(foundationValue: node.foundationValue(exportFormat: true))
            #expect(back == node, "\(node)")
            // Without export format priorities are dropped and arrays appear, but the data survives.
            #expect(try Node(foundationValue: node.foundationValue()) == node.strippingPriorities())
        }
    }
}
