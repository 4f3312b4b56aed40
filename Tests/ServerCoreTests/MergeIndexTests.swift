import CoreTree
@testable import ServerCore
import Testing

/// The part of a merge each listen location below it hears: an overwrite inside a written
/// child, the written children below it (in the merge's order), or nothing.
@Suite("Merge index")
struct MergeIndexTests {
    private let index = MergeIndex([
        (TreePath(unchecked: "a/b"), Node(.number(1))),
        (TreePath(unchecked: "c"), Node(.number(2))),
        (TreePath(unchecked: "a/d/e"), Node(.number(3))),
    ])

    private func describe(_ part: MergeIndex.Part) -> String {
        switch part {
        case .inside: "inside"
        case .untouched: "untouched"
        case .below(let children): children.map { "\($0.path.relativeForm)=\($0.node.jsonString(format: .plain))" }.joined(separator: ",")
        }
    }

    @Test("Locations at, inside, above and beside the written children")
    func parts() {
        #expect(describe(index.part(at: TreePath(unchecked: "a/b"))) == "inside")
        #expect(describe(index.part(at: TreePath(unchecked: "a/b/x/y"))) == "inside")
        #expect(describe(index.part(at: TreePath(unchecked: "c/z"))) == "inside")
        #expect(describe(index.part(at: TreePath(unchecked: "a"))) == "b=1,d/e=3", "in the merge's order")
        #expect(describe(index.part(at: TreePath(unchecked: "a/d"))) == "e=3")
        #expect(describe(index.part(at: TreePath(unchecked: "a/x"))) == "untouched")
        #expect(describe(index.part(at: TreePath(unchecked: "q"))) == "untouched")
        #expect(describe(index.part(at: .root)) == "a/b=1,c=2,a/d/e=3")
    }
}
