import Foundation
import TestSupport
import Testing
@testable import CoreTree

@Suite("Large trees")
struct LargeTreeTests {
    @Test("a node with 1,000,000 children stays sound through 10,000 random updates")
    func millionChildren() async throws {
        let initialCount = 1_000_000
        let elements = (0..<initialCount).map { (key: ChildKey(String($0)), value: num(Double($0))) }
        var node = Node(children: SortedMap(sortedUniqueElements: elements))
        #expect(node.childCount == initialCount)
        #expect(node.children.invariantViolation() == nil)
        #expect(node.children.height == Int(log2(Double(initialCount))) + 1)

        // Reference: which integer keys are present (the range allows inserts past the initial end),
        // plus the string keys added.
        let integerRange = 2_000_000
        var present = [Bool](repeating: false, count: integerRange)
        for index in 0..<initialCount { present[index] = true }
        var stringKeys: [String: Double] = [:]
        var count = initialCount

        var random = SplitMix64(seed: 1_000_000)
        var pushIDs = PushIDGenerator(source: SplitMix64(seed: 42))
        for step in 0..<10_000 {
            // Hands the pool thread back now and then (a two-thread pool runs the whole suite).
            if step % 500 == 0 { await Task.yield() }
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                // Remove an integer key (present or not).
                let key = Int.random(in: 0..<integerRange, using: &random)
                node = node.updatingImmediateChild(ChildKey(String(key)), to: .empty)
                if present[key] { count -= 1 }
                present[key] = false
            case 4..<8:
                let key = Int.random(in: 0..<integerRange, using: &random)
                node = node.updatingImmediateChild(ChildKey(String(key)), to: num(Double(key)))
                if !present[key] { count += 1 }
                present[key] = true
            case 8:
                let key = pushIDs.next(milliseconds: 1_700_000_000_000 + Int64(step / 3))
                node = node.updatingImmediateChild(ChildKey(key), to: num(-1))
                if stringKeys.updateValue(-1, forKey: key) == nil { count += 1 }
            default:
                // Remove a contiguous run from the front, which rebalances the left spine hard.
                for key in 0..<Int.random(in: 1...20, using: &random) where present[key] {
                    node = node.updatingImmediateChild(ChildKey(String(key)), to: .empty)
                    present[key] = false
                    count -= 1
                }
            }
        }

        let children = node.children
        #expect(children.invariantViolation() == nil)
        #expect(children.count == count)
        #expect(node.childCount == count)
        let bound = 2.5 * log2(Double(count)) + 2
        #expect(Double(children.height) <= bound, "height \(children.height) above \(bound)")

        // The expected key order: present integers ascending, then the push ids (ASCII order).
        var expectedKeys: [String] = []
        expectedKeys.reserveCapacity(count)
        for key in 0..<integerRange where present[key] { expectedKeys.append(String(key)) }
        expectedKeys.append(contentsOf: stringKeys.keys.sorted { bytes($0).lexicographicallyPrecedes(bytes($1)) })
        #expect(expectedKeys.count == count)
        #expect(children.first?.key.stringValue == expectedKeys.first)
        #expect(children.last?.key.stringValue == expectedKeys.last)

        for _ in 0..<2_000 {
            let index = Int.random(in: 0..<count, using: &random)
            let element = children.element(at: index)
            #expect(element.key.stringValue == expectedKeys[index])
            #expect(children.index(of: element.key) == index)
            if index + 1 < count {
                #expect(element.key < children.element(at: index + 1).key)
                #expect(children.successor(of: element.key)?.key.stringValue == expectedKeys[index + 1])
            }
            if index > 0 {
                #expect(children.predecessor(of: element.key)?.key.stringValue == expectedKeys[index - 1])
            }
            // Lookups, present and absent.
            let probe = Int.random(in: 0..<integerRange, using: &random)
            #expect(node.immediateChild(ChildKey(String(probe))) == (present[probe] ? num(Double(probe)) : .empty))
        }
        for (key, value) in stringKeys.prefix(200) {
            #expect(node.immediateChild(ChildKey(key)) == num(value))
        }

        // A walk from an arbitrary key in both directions.
        let start = Int.random(in: 0..<count, using: &random)
        let startKey = ChildKey(expectedKeys[start])
        #expect(children.elements(from: startKey).prefix(500).map(\.key.stringValue) == Array(expectedKeys[start...].prefix(500)))
        #expect(children.reversedElements(from: startKey).prefix(500).map(\.key.stringValue) == Array(expectedKeys[...start].reversed().prefix(500)))
    }
}
