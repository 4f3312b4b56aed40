import CoreTree
@testable import QueryEngine
import TestSupport
import Testing

/// The write tree's path index: removing writes in any order leaves the same visible data as
/// building the tree again from the writes that remain, and a removal it reports as invisible
/// changes nothing.
@Suite("WriteTree path index")
struct WriteTreeIndexTests {
    private static let keys: [ChildKey] = ["a", "b", "c"]

    private static func path(_ random: inout SplitMix64) -> TreePath {
        TreePath(keys: (0..<Int(random.next() % 4)).map { _ in keys[Int(random.next() % 3)] })
    }

    private static func node(_ random: inout SplitMix64) -> Node {
        switch random.next() % 4 {
        case 0: return .empty
        case 1: return Node(.number(Double(random.next() % 100)))
        default:
            var node = Node.empty
            for key in keys where random.next() % 2 == 0 {
                node = node.updatingImmediateChild(key, to: random.next() % 3 == 0
                    ? Node(children: ["a": Node(.number(Double(random.next() % 9)))]) : Node(.string("v\(random.next() % 9)")))
            }
            return node
        }
    }

    /// Everything the visible writes say, as seen by a reader: the data over two bases and the
    /// complete data at every path of the key universe.
    private static func effect(_ tree: WriteTree) -> [String] {
        let base = Node(children: ["a": Node(.number(1)), "b": Node(children: ["c": Node(.string("s"))])])
        var seen = [tree.visibleWrites.apply(to: .empty).jsonString(format: .export), tree.visibleWrites.apply(to: base).jsonString(format: .export)]
        for first in keys {
            for second in keys {
                for path in [TreePath(keys: [first]), TreePath(keys: [first, second])] {
                    seen.append(tree.completeWriteData(at: path)?.jsonString(format: .export) ?? "-")
                }
            }
        }
        return seen
    }

    private static func rebuilt(from writes: [UserWriteRecord]) -> WriteTree {
        var tree = WriteTree()
        for write in writes {
            if let node = write.overwrite {
                tree.addOverwrite(path: write.path, node: node, writeId: write.writeId, visible: write.visible)
            } else {
                tree.addMerge(path: write.path, children: write.merge ?? [], writeId: write.writeId)
            }
        }
        return tree
    }

    @Test("random writes removed in random order", arguments: 1...300)
    func removalsMatchARebuild(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        var tree = WriteTree()
        for id in 1...Int64(3 + random.next() % 10) {
            let path = Self.path(&random)
            if random.next() % 10 < 7 {
                tree.addOverwrite(path: path, node: Self.node(&random), writeId: id * 2, visible: random.next() % 5 != 0)
            } else {
                let children = (0..<(1 + random.next() % 3)).map { _ in (path: Self.path(&random), node: Self.node(&random)) }
                tree.addMerge(path: path, children: children, writeId: id * 2)
            }
        }
        var remaining = tree.allWrites.map(\.writeId)
        while !remaining.isEmpty {
            let id = remaining.remove(at: Int(random.next() % UInt64(remaining.count)))
            let before = Self.effect(tree)
            let visible = tree.removeWrite(id)
            let after = Self.effect(tree)
            #expect(after == Self.effect(Self.rebuilt(from: tree.allWrites)), "seed \(seed): removing \(id) left data a rebuild does not have")
            if !visible { #expect(before == after, "seed \(seed): removing \(id) was reported invisible but changed the data") }
            #expect(tree.count == remaining.count && tree.allWrites.map(\.writeId) == remaining.sorted())
        }
    }
}
