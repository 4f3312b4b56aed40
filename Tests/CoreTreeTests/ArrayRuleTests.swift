import Foundation
import TestSupport
import Testing
@testable import CoreTree

@Suite("Array rule")
struct ArrayRuleTests {
    @Test("{0,1,3} is an array with a hole")
    func sparseArray() throws {
        let node = json(#"{"0": "a", "1": "b", "3": "c"}"#)
        #expect(node.isArrayLike)
        #expect(node.jsonString() == #"["a","b",null,"c"]"#)
        let value = try #require(node.foundationValue() as? [Any?])
        #expect(value.count == 4)
        #expect(value[0] as? String == "a")
        #expect(value[1] as? String == "b")
        #expect(value[2] == nil)
        #expect(value[3] as? String == "c")
        let loose = try #require(node.foundationValue() as? [Any])
        #expect(loose.count == 4)
        #expect(try Node(foundationValue: node.foundationValue()) == node)
        #expect(try Node(jsonString: node.jsonString()) == node)
    }

    @Test("the largest key must be below twice the number of children", arguments: [
        (#"{"0": 1}"#, true), (#"{"1": 1}"#, true), (#"{"2": 1}"#, false), (#"{"0": 1, "1": 1}"#, true), (#"{"1": 1, "2": 1}"#, true),
        (#"{"2": 1, "3": 1}"#, true), (#"{"3": 1, "4": 1}"#, false), (#"{"0": 1, "3": 1}"#, true),
        (#"{"0": 1, "4": 1}"#, false), (#"{"0": "a", "5": "b"}"#, false), (#"{"0": 1, "1": 1, "5": 1}"#, true),
        (#"{"0": 1, "1": 1, "6": 1}"#, false),
        (#"{"-1": 1, "0": 1}"#, false), (#"{"0": 1, "a": 1}"#, false), (#"{"0": 1, "01": 1}"#, false),
        (#"{"0": 1, "-0": 1}"#, false), (#"{"0": 1, "1.0": 1}"#, false), (#"{"a": 1}"#, false),
        (#"{"2147483647": 1}"#, false),
    ])
    func arrayRule(text: String, isArray: Bool) throws {
        let node = json(text)
        #expect(node.isArrayLike == isArray)
        let plain = node.jsonString(format: .plain)
        #expect(plain.hasPrefix("[") == isArray, "\(plain)")
        #expect((node.foundationValue() is [Any?]) == isArray)
        #expect((node.foundationValue() is [String: Any]) == !isArray)
        // Export format never makes arrays.
        #expect(node.jsonString(format: .export).hasPrefix("{"))
        #expect(node.foundationValue(exportFormat: true) is [String: Any])
        // Either way the plain text parses back to the same node.
        #expect(try Node(jsonString: plain) == node)
    }

    @Test("leaves and the empty node are not array-like; a prioritised array is an object in export form")
    func edgeCases() {
        #expect(!num(0).isArrayLike)
        #expect(!Node.empty.isArrayLike)
        let withPriority = json(#"{"0": 1, "1": 2, ".priority": 3}"#)
        #expect(withPriority.isArrayLike)
        #expect(withPriority.jsonString(format: .plain) == "[1,2]")
        #expect(withPriority.jsonString(format: .export) == #"{"0":1,"1":2,".priority":3}"#)
        #expect(withPriority.jsonString(format: [.arrays, .priorities]) == #"{"0":1,"1":2,".priority":3}"#)
        // Nested arrays.
        let nested = json(#"[[1, 2], {"0": "x", "2": "y"}]"#)
        #expect(nested.jsonString() == #"[[1,2],["x",null,"y"]]"#)
    }

    @Test("random integer-keyed nodes follow the rule", arguments: [1, 2] as [UInt64])
    func randomRule(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let count = Int.random(in: 1...8, using: &random)
            let keys = Set((0..<count).map { _ in Int.random(in: -2...20, using: &random) })
            let node = Node(children: keys.map { (key: ChildKey(String($0)), value: num(Double($0))) })
            let expected = keys.allSatisfy { $0 >= 0 } && keys.max()! < 2 * keys.count
            #expect(node.isArrayLike == expected, "\(keys.sorted())")
            if expected {
                let array = node.foundationValue() as? [Any?]
                #expect(array?.count == keys.max()! + 1)
                for index in 0...keys.max()! {
                    #expect((array?[index] as? Int) == (keys.contains(index) ? index : nil))
                }
            }
        }
    }
}
