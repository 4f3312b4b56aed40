import Testing
import TestSupport
@testable import CoreTree

@Suite("Node")
struct NodeTests {
    let sample = json(#"{"a": {"b": 1, "c": {".value": "x", ".priority": 5}, ".priority": "pa"}, "d": true}"#)

    @Test("kinds and accessors")
    func kinds() {
        #expect(Node.empty.isEmpty && !Node.empty.isLeaf && Node.empty.leafValue == nil && Node.empty.childCount == 0)
        #expect(num(1).isLeaf && !num(1).isEmpty && num(1).leafValue == .number(1) && num(1).childCount == 0)
        #expect(!sample.isLeaf && !sample.isEmpty && sample.leafValue == nil && sample.childCount == 2)
        #expect(sample.firstChildKey == "a" && sample.lastChildKey == "d")
        #expect(sample.predecessorChildKey(of: "d") == "a" && sample.successorChildKey(of: "a") == "d")
        #expect(sample.predecessorChildKey(of: "a") == nil && sample.successorChildKey(of: "d") == nil)
        #expect(sample.successorChildKey(of: "b") == "d")
        #expect(Node.empty.firstChildKey == nil)
    }

    @Test("immediateChild and child(at:)")
    func childAccess() {
        #expect(sample.immediateChild("d") == bool(true))
        #expect(sample.immediateChild("zz") == .empty)
        #expect(sample.child(at: "a/b") == num(1))
        #expect(sample.child(at: "a/c") == str("x", priority: .number(5)))
        #expect(sample.child(at: "") == sample)
        #expect(sample.child(at: "a/b/deeper") == .empty)
        #expect(sample.child(at: "missing/deeper") == .empty)
        #expect(sample.hasChild("a") && !sample.hasChild("zz"))
        // `.priority` addresses the priority as a leaf.
        #expect(sample.child(at: "a/.priority") == str("pa"))
        #expect(sample.child(at: "a/c/.priority") == num(5))
        #expect(sample.child(at: "a/b/.priority") == .empty)
        #expect(sample.immediateChild(.priority) == .empty)
        #expect(Node.empty.immediateChild(.priority) == .empty)
        #expect(!sample.hasChild(.priority))
        #expect(sample.child(at: "a").hasChild(.priority))
    }

    @Test("updatingChild writes, replaces and removes")
    func updating() {
        var node = sample.updatingChild(at: "a/b", to: num(2))
        #expect(node.child(at: "a/b") == num(2))
        #expect(node.child(at: "a/.priority") == str("pa"), "a sibling write keeps the parent's priority")
        #expect(sample.child(at: "a/b") == num(1), "the original is unchanged")

        node = node.updatingChild(at: "x/y/z", to: str("new"))
        #expect(node.child(at: "x/y/z") == str("new"))
        #expect(node.child(at: "x").childCount == 1)

        // Writing null removes, and empty parents vanish with their last child.
        node = node.updatingChild(at: "x/y/z", to: .empty)
        #expect(!node.hasChild("x"))
        #expect(node == sample.updatingChild(at: "a/b", to: num(2)))

        // An empty path replaces the whole node.
        #expect(sample.updatingChild(at: .root, to: num(7)) == num(7))
        #expect(sample.updatingChild(at: .root, to: .empty) == .empty)

        // Removing something absent changes nothing.
        #expect(sample.updatingChild(at: "a/zz/q", to: .empty) == sample)
        #expect(Node.empty.updatingChild(at: "a/b", to: .empty) == .empty)
    }

    @Test("removing the last child gives the empty node and drops the priority")
    func removingLastChild() {
        let node = tree(["only": num(1)], priority: .number(3))
        #expect(node.priority == .number(3))
        let removed = node.updatingImmediateChild("only", to: .empty)
        #expect(removed.isEmpty)
        #expect(removed.priority == nil)
        #expect(removed == .empty)
        let nested = json(#"{"a": {"b": {"c": 1, ".priority": 1}, ".priority": 2}}"#)
        #expect(nested.updatingChild(at: "a/b/c", to: .empty) == .empty)
    }

    @Test("writing a child into a leaf keeps the leaf's priority")
    func childIntoLeaf() {
        let leaf = str("leaf", priority: .string("p"))
        let node = leaf.updatingImmediateChild("k", to: num(1))
        #expect(node.leafValue == nil)
        #expect(node.childCount == 1 && node.immediateChild("k") == num(1))
        #expect(node.priority == .string("p"))
        // Writing null into a leaf leaves it alone.
        #expect(leaf.updatingImmediateChild("k", to: .empty) == leaf)
        // Writing into the empty node makes a children node without priority.
        let fromEmpty = Node.empty.updatingChild(at: "a/b", to: num(1))
        #expect(fromEmpty == json(#"{"a": {"b": 1}}"#) && fromEmpty.priority == nil)
        // Deep writes through a leaf replace it.
        #expect(num(4).updatingChild(at: "a/b", to: num(1)) == json(#"{"a": {"b": 1}}"#))
    }

    @Test("`.priority` paths set and clear priorities")
    func priorityPaths() {
        var node = sample.updatingChild(at: "a/b/.priority", to: num(9))
        #expect(node.child(at: "a/b") == num(1, priority: .number(9)))
        node = node.updatingChild(at: "a/.priority", to: .empty)
        #expect(node.child(at: "a").priority == nil)
        #expect(node.child(at: "a/b").priority == .number(9))
        node = node.updatingChild(at: "a/b/.priority", to: str("s"))
        #expect(node.child(at: "a/b").priority == .string("s"))
        // A boolean or children node is no priority: it clears it.
        #expect(node.updatingChild(at: "a/b/.priority", to: bool(true)).child(at: "a/b").priority == nil)
        #expect(node.updatingChild(at: "a/b/.priority", to: json(#"{"x":1}"#)).child(at: "a/b").priority == nil)
        // Priorities of nonexistent nodes are ignored.
        #expect(sample.updatingChild(at: "nope/.priority", to: num(1)) == sample)
        #expect(Node.empty.updatingChild(at: ".priority", to: num(1)) == .empty)
        // Paths below `.priority` hold nothing.
        #expect(sample.updatingChild(at: "a/.priority/x", to: num(1)) == sample)
        #expect(sample.child(at: "a/.priority/x") == .empty)
        // The root priority.
        #expect(sample.updatingChild(at: ".priority", to: num(1)).priority == .number(1))
    }

    @Test("withPriority, and the empty node ignores priority")
    func withPriority() {
        #expect(num(1).withPriority(.number(2)) == num(1, priority: .number(2)))
        #expect(num(1, priority: .number(2)).withPriority(nil) == num(1))
        #expect(num(1, priority: .number(2)).withPriority(.string("x")).priority == .string("x"))
        #expect(sample.withPriority(.number(1)).priority == .number(1))
        #expect(sample.withPriority(.number(1)).children == sample.children)
        #expect(sample.child(at: "a").withPriority(nil).priority == nil)
        #expect(Node.empty.withPriority(.number(1)) == .empty)
        #expect(Node.empty.withPriority(.number(1)).priority == nil)
        #expect(tree([:], priority: .number(1)) == .empty)
        #expect(tree(["a": Node.empty], priority: .number(1)).priority == nil)
    }

    @Test("children initialisers drop empty children and keep the last duplicate")
    func childrenInitialisers() {
        let node = tree(["b": num(1), "a": .empty, "b": num(2), "c": str("c")])
        #expect(node.childCount == 2)
        #expect(node.immediateChild("b") == num(2))
        let map = SortedMap<ChildKey, Node>(sortedUniqueElements: [(key: ChildKey("a"), value: Node.empty), (key: ChildKey("b"), value: num(1))])
        let fromMap = Node(children: map, priority: .string("p"))
        #expect(fromMap.childCount == 1 && fromMap.priority == .string("p"))
        #expect(fromMap.children.invariantViolation() == nil)
    }

    @Test("equality is structural and includes priorities")
    func equality() {
        #expect(num(1) == num(1))
        #expect(num(1) != num(2))
        #expect(num(1) != str("1"))
        #expect(num(1) != bool(true))
        #expect(num(1) != num(1, priority: .number(1)))
        #expect(num(1, priority: .number(1)) != num(1, priority: .string("1")))
        #expect(num(1, priority: .number(1)) == num(1, priority: .number(1)))
        #expect(Node.empty != num(0))
        #expect(json(#"{"a":1}"#) != num(1))
        #expect(json(#"{"a":1,"b":2}"#) == json(#"{"b":2,"a":1}"#))
        #expect(json(#"{"a":1,"b":2}"#) != json(#"{"a":1,"b":3}"#))
        #expect(json(#"{"a":1,"b":2}"#) != json(#"{"a":1,"c":2}"#))
        #expect(json(#"{"a":1,".priority":1}"#) != json(#"{"a":1}"#))
        #expect(json(#"{"a":{"b":1,".priority":1}}"#) != json(#"{"a":{"b":1}}"#))
        #expect(tree(["a": num(1)]) == json(#"{"a":1}"#))
    }

    @Test("strippingPriorities removes priorities at every depth")
    func stripping() {
        var random = SplitMix64(seed: 21)
        for _ in 0..<100 {
            let node = Gen.node(depth: 4, using: &random)
            let stripped = node.strippingPriorities()
            func hasPriority(_ node: Node) -> Bool {
                node.priority != nil || node.children.contains { hasPriority($0.value) }
            }
            #expect(!hasPriority(stripped))
            #expect(stripped.jsonString(format: .plain) == node.jsonString(format: .plain))
            #expect(stripped.childCount == node.childCount)
        }
    }

    @Test("random updates agree with a nested-dictionary model", arguments: [1, 2] as [UInt64])
    func randomUpdates(seed: UInt64) {
        // The model: a leaf, or a dictionary of non-empty children (no priorities).
        indirect enum Model: Equatable {
            case leaf(Double)
            case children([String: Model])
            static let empty = Model.children([:])

            func updating(_ keys: ArraySlice<String>, to value: Model) -> Model {
                guard let first = keys.first else { return value }
                if case .leaf = self {
                    // Writing null below a leaf leaves the leaf alone; anything else replaces it.
                    let child = Model.empty.updating(keys.dropFirst(), to: value)
                    return child == .empty ? self : .children([first: child])
                }
                var children: [String: Model] = [:]
                if case .children(let existing) = self { children = existing }
                let updated = (children[first] ?? .empty).updating(keys.dropFirst(), to: value)
                children[first] = updated == .empty ? nil : updated
                return .children(children)
            }

            var node: Node {
                switch self {
                case .leaf(let value): return num(value)
                case .children(let children):
                    return Node(children: children.map { (key: ChildKey($0.key), value: $0.value.node) })
                }
            }
        }
        var random = SplitMix64(seed: seed)
        var node = Node.empty
        var model = Model.empty
        let alphabet = ["a", "b", "c", "1", "2", "10"]
        for step in 0..<1_500 {
            let path = (0..<Int.random(in: 0...3, using: &random)).map { _ in random.pick(alphabet) }
            let value: Model = random.chance(0.35) ? .empty : .leaf(Double(step))
            node = node.updatingChild(at: TreePath(keys: path.map { ChildKey($0) }), to: value.node)
            model = model.updating(path[...], to: value)
            #expect(node == model.node)
            #expect(node.children.invariantViolation() == nil)
        }
    }
}
