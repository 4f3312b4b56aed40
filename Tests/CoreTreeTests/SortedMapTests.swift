import Foundation
import TestSupport
import Testing
@testable import CoreTree

/// A naive model of a sorted map: a dictionary plus a sort on demand.
private struct ReferenceMap {
    var storage: [Int: Int] = [:]
    var sorted: [(key: Int, value: Int)] { storage.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) } }
}

private func pairs(_ elements: some Sequence<(key: Int, value: Int)>) -> [[Int]] { elements.map { [$0.key, $0.value] } }

@Suite("SortedMap")
struct SortedMapTests {
    /// Checks every query of `map` against the reference.
    private func check(_ map: SortedMap<Int, Int>, against reference: ReferenceMap, random: inout SplitMix64, sourceLocation: SourceLocation = #_sourceLocation) {
        let sorted = reference.sorted
        #expect(map.invariantViolation() == nil, "\(map.invariantViolation() ?? "")", sourceLocation: sourceLocation)
        #expect(map.count == sorted.count, sourceLocation: sourceLocation)
        #expect(map.isEmpty == sorted.isEmpty, sourceLocation: sourceLocation)
        #expect(pairs(map) == pairs(sorted), sourceLocation: sourceLocation)
        #expect(pairs(map.reversedElements()) == pairs(sorted.reversed()), sourceLocation: sourceLocation)
        #expect(Array(map.keys) == sorted.map { $0.key }, sourceLocation: sourceLocation)
        #expect(map.first.map { [$0.key, $0.value] } == sorted.first.map { [$0.key, $0.value] }, sourceLocation: sourceLocation)
        #expect(map.last.map { [$0.key, $0.value] } == sorted.last.map { [$0.key, $0.value] }, sourceLocation: sourceLocation)
        for _ in 0..<30 {
            // Probe both present keys and absent ones, including beyond both ends.
            let probe = sorted.isEmpty || random.chance(0.5) ? Int.random(in: -10...1010, using: &random) : random.pick(sorted).key
            #expect(map[probe] == reference.storage[probe], sourceLocation: sourceLocation)
            #expect(map.contains(probe) == (reference.storage[probe] != nil), sourceLocation: sourceLocation)
            let below = sorted.filter { $0.key < probe }
            let above = sorted.filter { $0.key > probe }
            #expect(map.predecessor(of: probe)?.key == below.last?.key, sourceLocation: sourceLocation)
            #expect(map.predecessor(of: probe)?.value == below.last?.value, sourceLocation: sourceLocation)
            #expect(map.successor(of: probe)?.key == above.first?.key, sourceLocation: sourceLocation)
            #expect(map.successor(of: probe)?.value == above.first?.value, sourceLocation: sourceLocation)
            #expect(map.index(of: probe) == below.count, sourceLocation: sourceLocation)
            #expect(pairs(map.elements(from: probe)) == pairs(sorted.filter { $0.key >= probe }), sourceLocation: sourceLocation)
            #expect(pairs(map.reversedElements(from: probe)) == pairs(sorted.filter { $0.key <= probe }.reversed()), sourceLocation: sourceLocation)
        }
        if !sorted.isEmpty {
            for _ in 0..<10 {
                let index = Int.random(in: 0..<sorted.count, using: &random)
                let element = map.element(at: index)
                #expect(element.key == sorted[index].key && element.value == sorted[index].value, sourceLocation: sourceLocation)
                #expect(map.index(of: element.key) == index, sourceLocation: sourceLocation)
            }
        }
    }

    @Test("random inserts and removes match a dictionary", arguments: [1, 2, 3, 4] as [UInt64])
    func randomOperations(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var map = SortedMap<Int, Int>()
        var reference = ReferenceMap()
        check(map, against: reference, random: &random)
        for batch in 0..<40 {
            // Alternate phases that grow and shrink the map, so deletions rebalance large trees too.
            let insertBias = batch % 10 < 6 ? 0.75 : 0.25
            for _ in 0..<50 {
                if random.chance(insertBias) {
                    let key = Int.random(in: 0...1000, using: &random)
                    let value = Int.random(in: 0...1_000_000, using: &random)
                    map = map.inserting(key, value)
                    reference.storage[key] = value
                } else {
                    let key = reference.storage.isEmpty || random.chance(0.2)
                        ? Int.random(in: -5...1005, using: &random)
                        : random.pick(reference.storage.keys)
                    map = map.removing(key)
                    reference.storage[key] = nil
                }
            }
            check(map, against: reference, random: &random)
        }
    }

    @Test("sequential inserts and removes stay balanced")
    func sequentialOperations() {
        var map = SortedMap<Int, Int>()
        for key in 0..<2_000 {
            map = map.inserting(key, key)
            if key % 97 == 0 { #expect(map.invariantViolation() == nil) }
        }
        #expect(map.invariantViolation() == nil)
        #expect(map.height <= Int(2.5 * log2(2_000.0)) + 2)
        for key in (0..<2_000).reversed() where key % 3 != 0 {
            map = map.removing(key)
        }
        #expect(map.invariantViolation() == nil)
        #expect(Array(map.keys) == Array(stride(from: 0, to: 2_000, by: 3)))
        for key in stride(from: 0, to: 2_000, by: 3) { map = map.removing(key) }
        #expect(map.isEmpty)
        #expect(map.first == nil && map.last == nil)
        #expect(map.height == 0)
    }

    @Test("old versions are unchanged by updates of new ones")
    func structuralSharing() {
        var random = SplitMix64(seed: 5)
        var versions: [(map: SortedMap<Int, Int>, expected: [[Int]])] = []
        var map = SortedMap<Int, Int>()
        var reference = ReferenceMap()
        for step in 0..<600 {
            let key = Int.random(in: 0...200, using: &random)
            if random.chance(0.7) {
                map = map.inserting(key, step)
                reference.storage[key] = step
            } else {
                map = map.removing(key)
                reference.storage[key] = nil
            }
            if step % 20 == 0 { versions.append((map, pairs(reference.sorted))) }
        }
        for version in versions {
            #expect(pairs(version.map) == version.expected)
            #expect(version.map.invariantViolation() == nil)
        }
        // Branching: two different updates of one version do not see each other.
        let base = versions[versions.count / 2].map
        let left = base.inserting(-1, -1)
        let right = base.removing(base.first!.key)
        #expect(left.count == base.count + 1 && right.count == base.count - 1)
        #expect(!right.contains(-1) && left.contains(base.first!.key))
        #expect(pairs(base) == versions[versions.count / 2].expected)
    }

    @Test("removing an absent key returns an equal map")
    func removingAbsent() {
        let map = SortedMap<Int, Int>(sortedUniqueElements: [(key: 1, value: 1), (key: 3, value: 3)])
        #expect(map.removing(2) == map)
        #expect(SortedMap<Int, Int>().removing(2).isEmpty)
    }

    @Test("init(_:) sorts, and the last duplicate wins")
    func initLastDuplicateWins() {
        let map = SortedMap<Int, String>([(key: 3, value: "c"), (key: 1, value: "a"), (key: 3, value: "C"), (key: 2, value: "b"), (key: 1, value: "A")])
        #expect(map.count == 3)
        #expect(map.map { $0.key } == [1, 2, 3])
        #expect(map.map(\.value) == ["A", "b", "C"])
        #expect(map.invariantViolation() == nil)
        // Already sorted input with an adjacent duplicate.
        let sortedInput = SortedMap<Int, String>([(key: 1, value: "x"), (key: 1, value: "y"), (key: 2, value: "z")])
        #expect(sortedInput.map(\.value) == ["y", "z"])

        var random = SplitMix64(seed: 8)
        for _ in 0..<50 {
            let elements = (0..<Int.random(in: 0...300, using: &random)).map { index in (key: Int.random(in: 0...100, using: &random), value: index) }
            var expected: [Int: Int] = [:]
            for element in elements { expected[element.key] = element.value }
            let built = SortedMap(elements)
            #expect(built.invariantViolation() == nil)
            #expect(pairs(built) == pairs(expected.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }))
        }
    }

    @Test("sortedUniqueElements builds a balanced tree")
    func bulkBuild() {
        for count in [0, 1, 2, 3, 7, 8, 100, 1023, 1024, 1025] {
            let map = SortedMap(sortedUniqueElements: (0..<count).map { (key: $0, value: $0 * 2) })
            #expect(map.count == count)
            #expect(map.invariantViolation() == nil)
            #expect(map.height == (count == 0 ? 0 : Int(log2(Double(count))) + 1))
            #expect(Array(map.keys) == Array(0..<count))
        }
    }

    @Test("equality compares contents, not shape")
    func equality() {
        let bulk = SortedMap(sortedUniqueElements: (0..<100).map { (key: $0, value: $0) })
        var incremental = SortedMap<Int, Int>()
        for key in (0..<100).reversed() { incremental = incremental.inserting(key, key) }
        #expect(bulk == incremental)
        #expect(bulk != incremental.inserting(50, -50))
        #expect(bulk != incremental.removing(99))
        #expect(bulk != incremental.removing(99).inserting(100, 99))
        #expect(SortedMap<Int, Int>() == SortedMap<Int, Int>())
        #expect(bulk == bulk)
    }

    @Test("ChildKey maps keep Firebase key order")
    func childKeyMap() {
        var random = SplitMix64(seed: 12)
        var map = SortedMap<ChildKey, Int>()
        var strings: [String] = []
        for index in 0..<500 {
            let key = Gen.anyKey(using: &random)
            map = map.inserting(ChildKey(key), index)
            strings.append(key)
        }
        #expect(map.invariantViolation() == nil)
        var unique: [String] = []
        for key in strings where !unique.contains(where: { bytes($0) == bytes(key) }) { unique.append(key) }
        let expected = unique.sorted { ReferenceKeyOrder.compare($0, $1) < 0 }.map(bytes)
        #expect(map.keys.map { bytes($0.stringValue) } == expected)
    }

    @Test("forEachUntil stops early")
    func forEachUntil() {
        let map = SortedMap(sortedUniqueElements: (0..<10).map { (key: $0, value: $0) })
        var seen: [Int] = []
        let finished = map.forEachUntil { key, _ in
            seen.append(key)
            return key < 4
        }
        #expect(!finished)
        #expect(seen == [0, 1, 2, 3, 4])
        #expect(map.forEachUntil { _, _ in true })
        #expect(map.underestimatedCount == 10)
    }
}
