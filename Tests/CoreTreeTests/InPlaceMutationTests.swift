import Testing
import TestSupport
@testable import CoreTree

/// The mutating forms update unshared nodes in place; copies taken earlier must never change.
@Suite("In-place mutation keeps value semantics")
struct InPlaceMutationTests {
    @Test("SortedMap.insert/remove match a reference and leave earlier copies untouched")
    func sortedMapMutationMatchesReference() {
        var random = SplitMix64(seed: 11)
        var map = SortedMap<Int, Int>()
        var reference: [Int: Int] = [:]
        var snapshots: [(SortedMap<Int, Int>, [Int: Int])] = []
        for step in 0..<5_000 {
            let key = Int(random.next() % 700)
            if random.next() % 4 == 0 {
                map.remove(key)
                reference[key] = nil
            } else {
                map.insert(key, step)
                reference[key] = step
            }
            if step % 500 == 0 { snapshots.append((map, reference)) }
        }
        #expect(map.invariantViolation() == nil)
        #expect(Array(map.keys) == reference.keys.sorted())
        #expect(map.allSatisfy { reference[$0.key] == $0.value })
        for (snapshot, expected) in snapshots {
            #expect(snapshot.invariantViolation() == nil)
            #expect(snapshot.count == expected.count)
            #expect(snapshot.allSatisfy { expected[$0.key] == $0.value })
        }
    }

    @Test("Node.updateImmediateChild equals updatingImmediateChild and spares copies")
    func nodeMutationMatchesPersistentForm() throws {
        var random = SplitMix64(seed: 12)
        var mutated = try Node(jsonString: #"{"a": 1, "b": {"c": true}, "d": "x"}"#)
        var persistent = mutated
        let original = mutated
        for step in 0..<2_000 {
            let key = ChildKey("k\(random.next() % 300)")
            let value = random.next() % 5 == 0 ? Node.empty : Node(.number(Double(step)))
            let before = mutated
            mutated.updateImmediateChild(key, to: value)
            persistent = persistent.updatingImmediateChild(key, to: value)
            #expect(before.immediateChild(key) != value || before == mutated)
            #expect(mutated == persistent)
        }
        #expect(original == (try Node(jsonString: #"{"a": 1, "b": {"c": true}, "d": "x"}"#)))
        #expect(mutated.children.invariantViolation() == nil)
    }

    @Test("updating a leaf or the priority in place behaves as the persistent form")
    func leafAndPriorityMutation() {
        var leaf = Node(.string("x"), priority: .number(1))
        leaf.updateImmediateChild("a", to: Node(.bool(true)))
        #expect(leaf == Node(.string("x"), priority: .number(1)).updatingImmediateChild("a", to: Node(.bool(true))))
        leaf.updateImmediateChild(.priority, to: Node(.string("p")))
        #expect(leaf.priority == .string("p"))
        leaf.updateImmediateChild("a", to: .empty)
        #expect(leaf.isEmpty)
    }
}
