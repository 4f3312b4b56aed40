import Testing
import TestSupport
@testable import CoreTree

/// Parses with the validating initialiser.
private func parse(_ string: String) throws(CoreTreeError) -> TreePath { try TreePath(validating: string) }

@Suite("TreePath")
struct TreePathTests {
    @Test("path strings normalise", arguments: [
        ("", [String]()), ("/", []), ("//", []), ("a", ["a"]), ("a/b", ["a", "b"]), ("/a/b/", ["a", "b"]),
        ("a//b", ["a", "b"]), ("/users/42/name", ["users", "42", "name"]),
    ])
    func normalisation(input: String, keys: [String]) throws {
        let path = try TreePath(validating: input)
        #expect(path.keys.map(\.stringValue) == keys)
        #expect(path == TreePath(unchecked: input))
        #expect(path.depth == keys.count)
        #expect(path.isRoot == keys.isEmpty)
    }

    @Test("wire and relative forms")
    func forms() throws {
        #expect(TreePath.root.wireForm == "/")
        #expect(TreePath.root.relativeForm == "")
        #expect(try parse("").wireForm == "/")
        #expect(try parse("/a/b/").wireForm == "/a/b")
        #expect(try parse("a/b").relativeForm == "a/b")
        #expect(try parse("a/b").description == "/a/b")
        #expect(try parse("a/b") == TreePath("/a/b/"))
        let literal: TreePath = "x/y"
        #expect(literal.keys == ["x", "y"])
    }

    @Test("child, parent, first and last keys")
    func navigation() throws {
        let path = try parse("a/b")
        #expect(path.child("c") == TreePath(keys: ["a", "b", "c"]))
        #expect(path.parent == TreePath(keys: ["a"]))
        #expect(path.parent?.parent == .root)
        #expect(TreePath.root.parent == nil)
        #expect(path.lastKey == "b")
        #expect(path.firstKey == "a")
        #expect(TreePath.root.lastKey == nil)
        #expect(TreePath.root.firstKey == nil)
        #expect(path.droppingFirst == TreePath(keys: ["b"]))
        #expect(TreePath.root.droppingFirst == .root)
        #expect(path.appending("c/d") == TreePath(keys: ["a", "b", "c", "d"]))
        #expect(TreePath.root.appending(path) == path)
    }

    @Test("containment, ancestry and relative paths")
    func relations() {
        let root = TreePath.root
        let a: TreePath = "a"
        let ab: TreePath = "a/b"
        let abc: TreePath = "a/b/c"
        let ax: TreePath = "a/x"
        let abcd: TreePath = "ab/cd"

        #expect(root.contains(root) && root.contains(abc))
        #expect(a.contains(a) && a.contains(ab) && a.contains(abc))
        #expect(!ab.contains(a) && !ab.contains(ax))
        #expect(!a.contains(abcd), "prefix matching is per key, not per character")

        #expect(a.isAncestor(of: ab) && root.isAncestor(of: a))
        #expect(!a.isAncestor(of: a) && !ab.isAncestor(of: a) && !ab.isAncestor(of: ax))
        #expect(abc.isDescendant(of: a) && abc.isDescendant(of: root))
        #expect(!a.isDescendant(of: a) && !a.isDescendant(of: ab))

        #expect(abc.relative(to: a) == TreePath(keys: ["b", "c"]))
        #expect(abc.relative(to: root) == abc)
        #expect(abc.relative(to: abc) == root)
        #expect(root.relative(to: root) == root)
        #expect(abc.relative(to: ax) == nil)
        #expect(a.relative(to: ab) == nil)
    }

    @Test("paths order key by key, ancestors first")
    func ordering() {
        let paths: [TreePath] = ["", "a", "a/1", "a/2", "a/10", "a/b", "a/b/c", "b", "10/x"]
        let expected: [TreePath] = ["", "10/x", "a", "a/1", "a/2", "a/10", "a/b", "a/b/c", "b"]
        #expect(paths.sorted() == expected)
        #expect(TreePath.root < TreePath("a"))
        #expect(!(TreePath("a") < TreePath("a")))
    }

    @Test("invalid segments throw invalidPath", arguments: [
        "a/b.c", "a#b", "a$b", "a[b", "a]b", "a/\u{0}", "a/b\u{1F}", "x\u{7F}", ".info/a.b", "a/.info",
        ".priority/a", "a/.priority/b", "a/.value", ".sv",
    ])
    func invalidSegments(input: String) {
        let error = expectCoreTreeError(.invalidPath) { _ = try TreePath(validating: input) }
        #expect(error?.message.contains("Invalid path") == true)
    }

    @Test("`.info` is allowed first and `.priority` last")
    func specialSegments() throws {
        #expect(try parse(".info").keys == [.info])
        #expect(try parse(".info/connected").keys == [.info, "connected"])
        #expect(try parse("a/.priority").lastKey?.isPriorityKey == true)
        #expect(try parse(".priority").keys == [.priority])
        #expect(try parse(".info/.priority").depth == 2)
        // Characters outside the forbidden set are fine, including Unicode and a comma.
        #expect(try parse("a b/ü/😀/,/-/_/~/%").depth == 8)
    }

    @Test("depth and length limits")
    func limits() throws {
        let levels32 = Array(repeating: "a", count: 32).joined(separator: "/")
        #expect(try TreePath(validating: levels32).depth == 32)
        let levels33 = Array(repeating: "a", count: 33).joined(separator: "/")
        let deep = expectCoreTreeError(.pathTooDeep) { _ = try TreePath(validating: levels33) }
        #expect(deep?.message.contains("33") == true)

        // 32 levels, exactly 768 bytes: 31 separators + 737 key bytes (31 × 23 + 24).
        var keys = Array(repeating: String(repeating: "k", count: 23), count: 31)
        keys.append(String(repeating: "k", count: 24))
        let maximal = keys.joined(separator: "/")
        #expect(maximal.utf8.count == 768)
        let path = try TreePath(validating: maximal)
        #expect(path.depth == 32 && path.utf8Length == 768)

        keys[31] += "k"
        let tooLong = expectCoreTreeError(.pathTooLong) { _ = try TreePath(validating: keys.joined(separator: "/")) }
        #expect(tooLong?.message.contains("769") == true)

        // Multi-byte characters count in UTF-8 bytes: 256 × "✔" (3 bytes) = 768 bytes, one more is too long.
        #expect(try TreePath(validating: String(repeating: "✔", count: 256)).utf8Length == 768)
        expectCoreTreeError(.pathTooLong) { _ = try TreePath(validating: String(repeating: "✔", count: 256) + "x") }
        // Slashes at the ends are not counted.
        #expect(try parse("/" + String(repeating: "x", count: 768) + "/").utf8Length == 768)
    }

    @Test("utf8Length counts keys and separators", arguments: [1, 2, 3] as [UInt64])
    func utf8Length(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let keys = (0..<Int.random(in: 0...6, using: &random)).map { _ in Gen.validKey(using: &random) }
            let path = TreePath(keys: keys.map { ChildKey($0) })
            let expected = keys.reduce(0) { $0 + $1.utf8.count } + max(0, keys.count - 1)
            #expect(path.utf8Length == expected)
            #expect(TreePath(unchecked: path.relativeForm) == path)
            #expect(TreePath(unchecked: path.wireForm) == path)
        }
    }
}
