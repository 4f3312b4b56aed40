import CoreTree
import QueryEngine
import TestSupport
import Testing

/// Building an index sorts plain numbers when it can; the order must be exactly the comparator's.
@Suite("IndexedNode: index order")
struct IndexedNodeOrderTests {
    /// A random index value: missing, null-like, a bool, a number (with many ties), an object, or
    /// (when allowed) a string.
    static func randomValue(_ random: inout SplitMix64, strings: Bool) -> Node? {
        switch random.next() % (strings ? 7 : 6) {
        case 0: return nil
        case 1: return Node(.bool(random.next() % 2 == 0))
        case 2: return Node(.number(Double(random.next() % 20) - 10))
        case 3: return Node(.number(Double(random.next() % 1000) / 7))
        case 4: return Node(children: ["nested": Node(.number(1))])
        case 5: return Node(.number(-0.0))
        default: return Node(.string(["a", "b", "", "10", "ä"][Int(random.next() % 5)]))
        }
    }

    @Test("orderByChild and orderByValue orders match a comparator sort, with and without strings", arguments: [false, true])
    func matchesComparatorSort(strings: Bool) {
        var random = SplitMix64(seed: strings ? 11 : 12)
        for round in 0..<20 {
            var children: [(key: ChildKey, value: Node)] = []
            for index in 0..<(50 + round * 13) {
                // Integer-like and string keys, so ties exercise both key orders.
                let name = ChildKey(random.next() % 2 == 0 ? "\(index)" : "k\(random.next() % 10_000)")
                var fields: [(key: ChildKey, value: Node)] = [(key: "other", value: Node(.number(1)))]
                if let value = IndexedNodeOrderTests.randomValue(&random, strings: strings) { fields.append((key: "score", value: value)) }
                children.append((key: name, value: Node(children: fields)))
            }
            let node = Node(children: children)
            for index in [QueryIndex.child("score"), .value] {
                let expected = node.children.map { NamedNode(name: $0.key, node: $0.value) }
                    .sorted { index.compare($0, $1) < 0 }.map(\.name)
                #expect(IndexedNode(node, index: index).children.map(\.name) == expected, "round \(round), \(index)")
            }
        }
    }
}
