import Testing
import TestSupport
@testable import CoreTree

@Suite("Validation")
struct ValidationTests {
    static let invalidKeys = [
        ".", "#", "$", "[", "]", "/", "a.b", "a#", "$a", "[0]", "a/b", "\u{0}", "\u{1}", "a\u{1F}b", "\n", "\u{7F}", "x\u{7F}", "",
    ]

    @Test("a write to a .priority path takes a number, a string, a server value or nothing; anything else is refused, not read as removing the priority")
    func priorityPathWrites() throws {
        for valid in [num(5), Node(.string("b")), Node.empty, try Node(json: Array(#"{".sv":"timestamp"}"#.utf8))] {
            try Validation.validateWrite(valid, at: "a/.priority")
            try Validation.validateUpdate([(path: ".priority", node: valid)], at: "a")
        }
        // fuzz-json found an update `{".priority": true}` accepted, which then removed the priority there.
        for invalid in [Node(.bool(true)), tree(["k": num(1)]), Node(.number(1), priority: .number(2))] {
            let error = expectCoreTreeError(.invalidPriority, "\(invalid)") { try Validation.validateWrite(invalid, at: "a/.priority") }
            #expect(error?.message.contains("/a/.priority") == true, "\(error?.message ?? "")")
            expectCoreTreeError(.invalidPriority, "update \(invalid)") { try Validation.validateUpdate([(path: ".priority", node: invalid)], at: "a") }
        }
    }

    @Test("invalid keys are rejected by validateKey", arguments: invalidKeys)
    func invalidKey(key: String) {
        let error = expectCoreTreeError(.invalidKey, "\(key.debugDescription)") { try Validation.validateKey(key) }
        guard let message = error?.message else { return }
        if key.isEmpty {
            #expect(message.contains("empty"))
        } else if let control = key.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            #expect(message.contains("U+\(String(control.value, radix: 16, uppercase: true))"), "\(message)")
        } else {
            #expect(message.contains("\"\(key)\""), "\(message)")
        }
    }

    @Test("invalid keys inside written data are rejected", arguments: invalidKeys)
    func invalidKeyInData(key: String) {
        let data = tree(["ok": tree([ChildKey(key): num(1)])])
        let error = expectCoreTreeError(.invalidKey, "\(key.debugDescription)") { try Validation.validateWrite(data, at: "p/q") }
        #expect(error?.message.contains("/p/q/ok") == true, "\(error?.message ?? "")")
    }

    @Test("valid keys pass", arguments: ["a", "0", "-1", "a b", "ü", "😀", ",", "a,b", "%2E", "-", "_", "~", "\u{80}", "\u{E000}", "a\\b", "\"", "'", "*", "@", "+"])
    func validKey(key: String) throws {
        try Validation.validateKey(key)
        try Validation.validateWrite(tree([ChildKey(key): num(1)]), at: .root)
    }

    @Test("random keys are accepted exactly when they avoid the forbidden characters", arguments: [1, 2] as [UInt64])
    func randomKeys(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<3_000 {
            var key = Gen.anyKey(using: &random)
            if random.chance(0.3) {
                key.insert(random.pick([".", "#", "$", "[", "]", "/", "\u{0}", "\u{1F}", "\u{7F}", "\t"] as [Character]), at: key.startIndex)
            }
            let forbidden = key.isEmpty || key.unicodeScalars.contains { ".#$[]/".unicodeScalars.contains($0) || $0.value < 0x20 || $0.value == 0x7F }
            var threw = false
            do { try Validation.validateKey(key) } catch { threw = error.code == .invalidKey }
            #expect(threw == forbidden, "\(key.debugDescription)")
        }
    }

    @Test("depth counts the levels of the data below the path")
    func depth() throws {
        func chain(_ levels: Int) -> Node {
            (0..<levels).reduce(num(1)) { node, _ in tree(["k": node]) }
        }
        let path30 = TreePath(keys: Array(repeating: "p", count: 30))
        try Validation.validateWrite(chain(2), at: path30)  // 32 levels
        let error = expectCoreTreeError(.pathTooDeep) { try Validation.validateWrite(chain(3), at: path30) }  // 33 levels
        #expect(error?.message.contains("33") == true)
        #expect(error?.message.contains("/p/p") == true)
        try Validation.validateWrite(chain(32), at: .root)
        expectCoreTreeError(.pathTooDeep) { try Validation.validateWrite(chain(33), at: .root) }
        expectCoreTreeError(.pathTooDeep) { try Validation.validateWrite(num(1), at: TreePath(keys: Array(repeating: "p", count: 33))) }
        // A leaf at depth 32 is fine: only keys count.
        try Validation.validateWrite(str("x"), at: TreePath(keys: Array(repeating: "p", count: 32)))
    }

    @Test("length counts the UTF-8 bytes of the whole path, separators included")
    func length() throws {
        // "a/" + 765 bytes = 767 bytes of path; a data key of 0 bytes is impossible, so use the boundary directly.
        let base = TreePath(keys: ["a", ChildKey(String(repeating: "b", count: 760))])  // 1 + 1 + 760 = 762 bytes
        #expect(base.utf8Length == 762)
        try Validation.validateWrite(tree(["12345": num(1)]), at: base)  // 762 + 1 + 5 = 768
        let error = expectCoreTreeError(.pathTooLong) {
            try Validation.validateWrite(tree(["123456": num(1)]), at: base)  // 769
        }
        #expect(error?.message.contains("769") == true)
        #expect(error?.message.contains("123456") == true)
        // Multi-byte keys count by bytes.
        expectCoreTreeError(.pathTooLong) {
            try Validation.validateWrite(tree(["✔✔": num(1)]), at: base)  // 762 + 1 + 6
        }
        try Validation.validateWrite(tree(["✔": num(1)]), at: base)
        // From the root there is no leading separator.
        let key768 = ChildKey(String(repeating: "x", count: 768))
        try Validation.validateWrite(tree([key768: num(1)]), at: .root)
        expectCoreTreeError(.pathTooLong) {
            try Validation.validateWrite(tree([ChildKey(String(repeating: "x", count: 769)): num(1)]), at: .root)
        }
        expectCoreTreeError(.pathTooLong) { try Validation.validateWrite(num(1), at: TreePath(keys: [ChildKey(String(repeating: "x", count: 769))])) }
    }

    @Test("strings may be up to 10 MB")
    func stringSize() throws {
        let limit = 10 * 1024 * 1024
        #expect(Validation.maxStringBytes == limit)
        try Validation.validateWrite(str(String(repeating: "a", count: limit)), at: "a")
        let error = expectCoreTreeError(.valueTooLarge) {
            try Validation.validateWrite(tree(["big": str(String(repeating: "a", count: limit + 1))]), at: "a")
        }
        #expect(error?.message.contains("/a/big") == true)
        // Bytes, not characters: 3,495,254 × "✔" is 10,485,762 bytes.
        expectCoreTreeError(.valueTooLarge) { try Validation.validateWrite(str(String(repeating: "✔", count: limit / 3 + 1)), at: "a") }
    }

    @Test("numbers and priorities must be finite")
    func finiteNumbers() throws {
        for bad in [Double.nan, .infinity, -.infinity] {
            let error = expectCoreTreeError(.invalidValue) {
                try Validation.validateWrite(tree(["n": num(bad)]), at: "x")
            }
            #expect(error?.message.contains("/x/n") == true)
            expectCoreTreeError(.invalidPriority) { try Validation.validateWrite(num(1, priority: .number(bad)), at: "x") }
        }
        try Validation.validateWrite(num(.greatestFiniteMagnitude, priority: .number(-.greatestFiniteMagnitude)), at: "x")
    }

    @Test("updates may not overlap or be empty")
    func updates() throws {
        try Validation.validateUpdate(writeList(["a": num(1), "b/c": num(2), "ab": num(3), "b/cd": num(4), "b/.priority": num(1)]), at: "root")
        var error = expectCoreTreeError(.invalidPath) { try Validation.validateUpdate(writeList(["a": num(1), "a/b": num(2)]), at: .root) }
        #expect(error?.message.contains("/a") == true && error?.message.contains("/a/b") == true)
        error = expectCoreTreeError(.invalidPath) { try Validation.validateUpdate(writeList(["x/y/z": num(1), "q": num(1), "x": num(2)]), at: "r") }
        #expect(error?.message.contains("/x/y/z") == true)
        expectCoreTreeError(.invalidPath) { try Validation.validateUpdate(writeList(["a": num(1), "a": num(2)]), at: .root) }
        expectCoreTreeError(.invalidPath) { try Validation.validateUpdate(writeList([.root: num(1)]), at: "a") }
        expectCoreTreeError(.invalidKey) { try Validation.validateUpdate(writeList(["a": tree(["b.c": num(1)])]), at: .root) }
        expectCoreTreeError(.pathTooDeep) {
            try Validation.validateUpdate(writeList([TreePath(keys: Array(repeating: "k", count: 3)): num(1)]), at: TreePath(keys: Array(repeating: "p", count: 30)))
        }
    }

    @Test("overlap detection agrees with a brute-force check", arguments: [1, 2] as [UInt64])
    func randomUpdates(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let alphabet: [ChildKey] = ["a", "b", "1", "10", "ab"]
        for _ in 0..<500 {
            let paths = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                TreePath(keys: (0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick(alphabet) })
            }
            var overlapping = false
            for (i, p) in paths.enumerated() {
                for (j, q) in paths.enumerated() where i != j && p.contains(q) { overlapping = true }
            }
            var code: CoreTreeError.Code?
            do {
                try Validation.validateUpdate(paths.map { ($0, num(1)) }, at: .root)
            } catch {
                code = error.code
            }
            #expect(code == (overlapping ? .invalidPath : nil), "\(paths)")
        }
    }

    @Test("random valid trees pass")
    func randomValidTrees() throws {
        var random = SplitMix64(seed: 3)
        for _ in 0..<200 {
            try Validation.validateWrite(Gen.node(depth: 4, validKeys: true, using: &random), at: "some/where")
        }
    }
}
