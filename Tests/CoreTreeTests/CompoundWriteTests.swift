import Testing
import TestSupport
@testable import CoreTree

private func writes(_ compound: CompoundWrite) -> [String] {
    var result: [String] = []
    compound.forEachWrite { path, node in result.append("\(path.wireForm)=\(node)") }
    return result
}

@Suite("CompoundWrite")
struct CompoundWriteTests {
    @Test("empty")
    func empty() {
        let empty = CompoundWrite.empty
        #expect(empty.isEmpty && empty.rootWrite == nil)
        #expect(!empty.hasCompleteWrite(at: .root) && empty.completeNode(at: "a") == nil)
        #expect(empty.completeChildren.isEmpty && empty.childCompoundWrites.isEmpty)
        #expect(empty.apply(to: json(#"{"a":1}"#)) == json(#"{"a":1}"#))
        #expect(CompoundWrite(writes: []) == .empty)
    }

    @Test("a root write determines everything")
    func rootWrite() {
        let compound = CompoundWrite.empty.addingWrite(at: "x", num(1)).addingWrite(at: .root, json(#"{"a": {"b": 1}, "c": 2}"#))
        #expect(compound.rootWrite == json(#"{"a": {"b": 1}, "c": 2}"#))
        #expect(writes(compound) == [#"/={"a":{"b":1},"c":2}"#])
        #expect(compound.hasCompleteWrite(at: .root) && compound.hasCompleteWrite(at: "a/b") && compound.hasCompleteWrite(at: "zz"))
        #expect(compound.completeNode(at: "a/b") == num(1))
        #expect(compound.completeNode(at: "zz") == .empty)
        #expect(compound.completeChildren.map { $0.key } == ["a", "c"])
        #expect(compound.childCompoundWrites.map { $0.key } == ["a", "c"])
        #expect(compound.childCompoundWrites.first?.write.rootWrite == json(#"{"b": 1}"#))
        #expect(compound.apply(to: json(#"{"old": 1}"#)) == json(#"{"a": {"b": 1}, "c": 2}"#))
        #expect(compound.childCompoundWrite(at: "a").rootWrite == json(#"{"b": 1}"#))
        #expect(compound.childCompoundWrite(at: "missing").rootWrite == .empty)
    }

    @Test("nested writes, and a write below an existing write updates it")
    func writeBelow() {
        var compound = CompoundWrite.empty.addingWrite(at: "a/b", json(#"{"c": 1, "d": 2}"#))
        #expect(writes(compound) == [#"/a/b={"c":1,"d":2}"#])
        #expect(!compound.hasCompleteWrite(at: "a") && compound.hasCompleteWrite(at: "a/b") && compound.hasCompleteWrite(at: "a/b/zz"))
        compound = compound.addingWrite(at: "a/b/c", num(10))
        #expect(writes(compound) == [#"/a/b={"c":10,"d":2}"#])
        compound = compound.addingWrite(at: "a/b/d", .empty)
        #expect(writes(compound) == [#"/a/b={"c":10}"#])
        compound = compound.addingWrite(at: "a/b/e/f", str("deep"))
        #expect(compound.completeNode(at: "a/b") == json(#"{"c": 10, "e": {"f": "deep"}}"#))
        // Removing everything below leaves an explicit null write, which still determines the data.
        compound = compound.addingWrite(at: "a/b/c", .empty).addingWrite(at: "a/b/e", .empty)
        #expect(compound.completeNode(at: "a/b") == .empty)
        #expect(compound.hasCompleteWrite(at: "a/b"))
        #expect(compound.apply(to: json(#"{"a": {"b": 5, "x": 1}}"#)) == json(#"{"a": {"x": 1}}"#))
    }

    @Test("a write above existing writes replaces them")
    func writeAbove() {
        let compound = CompoundWrite.empty
            .addingWrite(at: "a/b", num(1))
            .addingWrite(at: "a/c/d", num(2))
            .addingWrite(at: "e", num(3))
            .addingWrite(at: "a", json(#"{"z": 9}"#))
        #expect(writes(compound) == [#"/a={"z":9}"#, "/e=3"])
        #expect(compound.completeNode(at: "a/b") == .empty)
    }

    @Test("writes are visited shallowest first in key order")
    func order() {
        let compound = CompoundWrite(writes: writeList(["b": num(1), "10/x": num(2), "a": num(3), "2": num(4)]))
        #expect(writes(compound) == ["/2=4", "/10/x=2", "/a=3", "/b=1"])
    }

    @Test("removeWrite removes the write and those below it, not those above")
    func removeWrite() {
        let compound = CompoundWrite(writes: writeList(["a/b": num(1), "a/c/d": num(2), "e": num(3)]))
        #expect(writes(compound.removingWrite(at: "a")) == ["/e=3"])
        #expect(writes(compound.removingWrite(at: "a/b")) == ["/a/c/d=2", "/e=3"])
        #expect(writes(compound.removingWrite(at: "a/c/d")) == ["/a/b=1", "/e=3"])
        #expect(compound.removingWrite(at: "a/b").removingWrite(at: "a/c/d").removingWrite(at: "e").isEmpty)
        #expect(compound.removingWrite(at: "zz") == compound)
        #expect(compound.removingWrite(at: .root).isEmpty)
        // A write above the path is not changed.
        #expect(writes(compound.removingWrite(at: "e/f")) == writes(compound))
    }

    @Test("childCompoundWrite and childCompoundWrites")
    func childWrites() {
        let compound = CompoundWrite(writes: writeList(["a/b": num(1), "a/c": num(2), "d": json(#"{"e": 3}"#)]))
        #expect(writes(compound.childCompoundWrite(at: "a")) == ["/b=1", "/c=2"])
        #expect(compound.childCompoundWrite(at: "a").rootWrite == nil)
        #expect(compound.childCompoundWrite(at: "d").rootWrite == json(#"{"e": 3}"#))
        #expect(compound.childCompoundWrite(at: "d/e").rootWrite == num(3))
        #expect(compound.childCompoundWrite(at: "d/zz").rootWrite == .empty)
        #expect(compound.childCompoundWrite(at: "zz").isEmpty)
        #expect(compound.childCompoundWrite(at: "a/zz").isEmpty)
        #expect(compound.childCompoundWrite(at: .root) == compound)

        let children = compound.childCompoundWrites
        #expect(children.map { $0.key } == ["a", "d"])
        #expect(writes(children[0].write) == ["/b=1", "/c=2"])
        #expect(children[1].write.rootWrite == json(#"{"e": 3}"#))

        // completeChildren lists only the children written as a whole.
        #expect(compound.completeChildren.map { $0.key } == ["d"])
        #expect(compound.completeChildren.first?.node == json(#"{"e": 3}"#))
        let withNull = compound.addingWrite(at: "n", .empty)
        #expect(withNull.completeChildren.map { $0.key } == ["d", "n"])
    }

    @Test("addingWrites re-roots another compound write")
    func addingWrites() {
        let inner = CompoundWrite(writes: writeList(["x": num(1), "y/z": num(2)]))
        let outer = CompoundWrite(writes: writeList(["p/q": num(0)])).addingWrites(at: "p", inner)
        #expect(writes(outer) == ["/p/q=0", "/p/x=1", "/p/y/z=2"])
        let absorbed = CompoundWrite(writes: writeList(["p": json(#"{"keep": 1}"#)])).addingWrites(at: "p", inner)
        #expect(writes(absorbed) == [#"/p={"keep":1,"x":1,"y":{"z":2}}"#])
    }

    @Test("priority writes apply only where data exists")
    func priorityWrites() {
        let base = json(#"{"a": {"b": 1}, "c": 2}"#)
        let onExisting = CompoundWrite(writes: writeList(["a/.priority": num(5), "c/.priority": str("p")]))
        let applied = onExisting.apply(to: base)
        #expect(applied.child(at: "a").priority == .number(5))
        #expect(applied.child(at: "c") == num(2, priority: .string("p")))

        let onMissing = CompoundWrite(writes: writeList(["missing/.priority": num(5)]))
        #expect(onMissing.apply(to: base) == base)
        #expect(onMissing.apply(to: .empty) == .empty)

        // Inside a complete write, a priority for an absent location is dropped on the spot.
        let absorbed = CompoundWrite(writes: writeList(["a": json(#"{"b": 1}"#), "a/zz/.priority": num(5)]))
        #expect(writes(absorbed) == [#"/a={"b":1}"#])
        let absorbedExisting = CompoundWrite(writes: writeList(["a": json(#"{"b": 1}"#), "a/b/.priority": num(5)]))
        #expect(absorbedExisting.completeNode(at: "a/b") == num(1, priority: .number(5)))

        // Priority writes are applied after the data writes at the same level, so a priority for a
        // location that the same compound write fills in takes effect.
        let sameLevel = CompoundWrite(writes: writeList(["n/.priority": num(7), "n/v": num(1)]))
        #expect(sameLevel.apply(to: .empty) == json(#"{"n": {"v": 1, ".priority": 7}}"#))
        // ... and one whose location the writes empty is dropped.
        let emptied = CompoundWrite(writes: writeList(["a/.priority": num(7), "a/b": .empty]))
        #expect(emptied.apply(to: base) == json(#"{"c": 2}"#))
        // A null priority write clears the priority.
        let cleared = CompoundWrite(writes: writeList(["a/.priority": .empty]))
        #expect(cleared.apply(to: json(#"{"a": {"b": 1, ".priority": 3}}"#)) == json(#"{"a": {"b": 1}}"#))
    }

    @Test("layering keeps the net effect per location, not the history of the writes")
    func layeringIsNotSequential() {
        // Written one by one, the first write replaces the leaf and the second removes what it wrote,
        // leaving nothing. The compound write holds only the null write at "a/b", and a null written
        // below a leaf leaves the leaf alone. Firebase's CompoundWrite behaves the same way.
        let leaf = str("leaf")
        let writes = writeList(["a/b": num(1), "a/b": .empty])
        let compound = CompoundWrite(writes: writes)
        #expect(writes.reduce(leaf) { $0.updatingChild(at: $1.path, to: $1.node) } == .empty)
        #expect(compound.apply(to: leaf) == leaf)
        // Data writes at one level apply in key order, so emptying a prioritised node and filling
        // it through a key that sorts first keeps the priority.
        let base = json(#"{"d": 1, ".priority": 5}"#)
        let refill = writeList(["d": .empty, "c": num(2)])
        #expect(refill.reduce(base) { $0.updatingChild(at: $1.path, to: $1.node) } == json(#"{"c": 2}"#))
        #expect(CompoundWrite(writes: refill).apply(to: base) == json(#"{"c": 2, ".priority": 5}"#))
    }

    @Test("apply equals applying the writes one by one", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func applyMatchesSequentialUpdates(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let alphabet: [ChildKey] = ["a", "b", "1", "10"]
        func randomPath(maxDepth: Int) -> TreePath {
            TreePath(keys: (0..<Int.random(in: 0...maxDepth, using: &random)).map { _ in random.pick(alphabet) })
        }
        func randomValue() -> Node {
            random.chance(0.25) ? .empty : Gen.node(depth: 2, maxWidth: 3, using: &random).withPriority(random.chance(0.2) ? .number(1) : nil)
        }
        /// A base whose leaves all lie below the deepest write and whose inner nodes carry no
        /// priority. A compound write keeps only the net effect of the writes per location, so it
        /// cannot agree with the one-by-one sequence where that sequence first turns a leaf of the
        /// base into a children node and then empties it, or empties a prioritised node and
        /// refills it (see `layeringIsNotSequential`); those cases are excluded here.
        func randomBase(depth: Int) -> Node {
            if depth == 0 { return Node(Gen.leaf(using: &random), priority: Gen.priority(using: &random)) }
            return Node(children: alphabet.filter { _ in random.chance(0.5) }.map { (key: $0, value: randomBase(depth: depth - 1)) })
        }
        for _ in 0..<300 {
            let base = randomBase(depth: 4)
            var list: [(path: TreePath, node: Node)] = []
            // Data writes first ...
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let path = randomPath(maxDepth: 3)
                list.append((path, randomValue()))
            }
            // ... then priority writes, which a compound write applies after the data writes.
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let path = randomPath(maxDepth: 2).child(.priority)
                let priority: Node = random.pick([num(3), str("p"), .empty, num(-1)])
                list.append((path, priority))
            }
            var compound = CompoundWrite.empty
            var expected = base
            for (index, write) in list.enumerated() {
                compound = compound.addingWrite(at: write.path, write.node)
                expected = expected.updatingChild(at: write.path, to: write.node)
                // Every prefix of the list agrees, not just the whole list.
                if index >= list.count - 2 || index % 2 == 0 {
                    #expect(compound.apply(to: base) == expected, "after \(list.prefix(index + 1).map { "\($0.path)=\($0.node)" }) on \(base)")
                }
            }
            #expect(CompoundWrite(writes: list) == compound)
            // completeNode, where present, is what the writes give on any base.
            for _ in 0..<5 {
                let probe = randomPath(maxDepth: 3)
                if let complete = compound.completeNode(at: probe) {
                    #expect(complete == expected.child(at: probe))
                    #expect(compound.apply(to: .empty).child(at: probe) == complete)
                }
                #expect(compound.childCompoundWrite(at: probe).apply(to: base.child(at: probe)) == expected.child(at: probe))
            }
        }
    }
}
