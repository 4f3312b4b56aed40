import Foundation
import CoreTree
import Persistence
import TestSupport

/// The server cache over the store: random writes against a reference node, long paths, size.
struct CacheChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    private func withEngine(_ body: (StorageEngine, String) throws -> Void) throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        try body(engine, directory)
    }

    static let keys: [ChildKey] = ["a", "b", "2", "10", "-x", "zz"]

    static func randomPath(_ random: inout SplitMix64, maxDepth: Int) -> TreePath {
        let depth = Int(random.next() % UInt64(maxDepth + 1))
        return TreePath(keys: (0..<depth).map { _ in keys[Int(random.next() % UInt64(keys.count))] })
    }

    static func randomNode(_ random: inout SplitMix64, depth: Int) -> Node {
        let priority: Priority? = random.next() % 5 == 0 ? .number(Double(random.next() % 9)) : nil
        switch random.next() % (depth > 2 ? 3 : 5) {
        case 0: return .empty
        case 1: return Node(.string("s\(random.next() % 100)"), priority: priority)
        case 2: return Node(.number(Double(random.next() % 1000) / 8), priority: priority)
        default:
            var children: [(key: ChildKey, value: Node)] = []
            for key in keys where random.next() % 2 == 0 { children.append((key, randomNode(&random, depth: depth + 1))) }
            return Node(children: SortedMap(children.filter { !$0.value.isEmpty }.map { ($0.key, $0.value) }), priority: priority)
        }
    }

    func roundTrip() throws {
        try withEngine { engine, _ in
            var random = SplitMix64(seed: 21)
            var model = Node.empty
            for step in 0..<300 {
                let path = CacheChecks.randomPath(&random, maxDepth: 3)
                if random.next() % 4 == 0 {
                    var children: [(path: TreePath, node: Node)] = []
                    if random.next() % 2 == 0 {
                        // Distinct immediate children, as a server's merge usually is (one commit).
                        for key in CacheChecks.keys where random.next() % 3 == 0 {
                            children.append((TreePath(keys: [key]), CacheChecks.randomNode(&random, depth: path.depth + 1)))
                        }
                    } else {
                        for _ in 0..<Int(random.next() % 3 + 1) {
                            children.append((CacheChecks.randomPath(&random, maxDepth: 2), CacheChecks.randomNode(&random, depth: path.depth + 2)))
                        }
                    }
                    try engine.mergeServerCache(at: path, children: children)
                    for child in children { model = model.updatingChild(at: path.appending(child.path), to: child.node) }
                } else {
                    let node = CacheChecks.randomNode(&random, depth: path.depth)
                    try engine.overwriteServerCache(at: path, with: node)
                    model = model.updatingChild(at: path, to: node)
                }
                let probe = CacheChecks.randomPath(&random, maxDepth: 3)
                let cached = try engine.serverCache(at: probe)
                try require(cached == model.child(at: probe),
                            "step \(step): cache at \(probe.wireForm) is \(cached), the reference \(model.child(at: probe))")
                if step % 20 == 0 {
                    let running = engine.cacheSizeBytes
                    try require(running == (try engine.recountCacheSize()), "step \(step): the running size \(running) disagrees with a recount")
                }
            }
            let whole = try engine.serverCache(at: .root)
            try require(whole == model, "the whole cache \(whole) differs from the reference \(model)")
        }
    }

    /// A path of 32 keys whose UTF-8 form (with slashes) takes 768 bytes.
    static func longestPath(tag: Character) -> TreePath {
        // The longest path validation accepts: 768 UTF-8 bytes counting the 31 slashes between its
        // 32 keys (31 × 23 + 24 bytes of keys).
        var keys = (0..<31).map { ChildKey(String(tag) + String(format: "%02d", $0) + String(repeating: "k", count: 20)) }
        keys.append(ChildKey(String(tag) + String(repeating: "z", count: 23)))
        return TreePath(keys: keys)
    }

    func longPaths() throws {
        let path = CacheChecks.longestPath(tag: "p")
        try require(path.depth == 32 && path.utf8Length == Validation.maxPathBytes, "test path is \(path.depth) deep, \(path.utf8Length) bytes")
        try Validation.validatePathLimits(path, context: "conformance")
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        var engine = try StorageEngine(store: try suite.openStore(directory))
        let leaf = Node(.string("deep"), priority: .number(1))
        try engine.overwriteServerCache(at: path, with: leaf)
        try engine.overwriteServerCache(at: path.parent!.child("sibling"), with: Node(.number(2)))
        try engine.overwriteServerCache(at: TreePath(keys: Array(path.keys.prefix(3))).child("short"), with: Node(.bool(true)))
        try engine.appendUserWrite(UserWriteRecord(writeId: 1, path: path, kind: .overwrite(Node(.string("queued")))))
        try engine.close()
        engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        try require(try engine.serverCache(at: path) == leaf, "the leaf at the 768-byte path did not come back")
        let top = try engine.serverCache(at: TreePath(keys: Array(path.keys.prefix(3))))
        try require(top.child(at: path.relative(to: TreePath(keys: Array(path.keys.prefix(3))))!) == leaf, "reading an ancestor misses the deep leaf")
        try require(top.immediateChild("short") == Node(.bool(true)), "a short sibling was lost")
        try require(try engine.serverCache(at: path.parent!).immediateChild("sibling") == Node(.number(2)), "a long sibling was lost")
        try require(try engine.userWrites().first?.path == path, "the queued write's long path did not survive")
        try engine.overwriteServerCache(at: path, with: .empty)
        try require(try engine.serverCache(at: path).isEmpty, "removing the deep leaf did not remove it")
        try require(try engine.serverCache(at: path.parent!).immediateChild("sibling") == Node(.number(2)), "removing the deep leaf removed its sibling")
    }

    func sizeAccounting() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        var engine = try StorageEngine(store: try suite.openStore(directory))
        var random = SplitMix64(seed: 23)
        for _ in 0..<200 {
            try engine.overwriteServerCache(at: CacheChecks.randomPath(&random, maxDepth: 3), with: CacheChecks.randomNode(&random, depth: 1))
        }
        try engine.overwriteServerCache(at: CacheChecks.longestPath(tag: "s"), with: Node(.string("x")))
        let running = engine.cacheSizeBytes
        let recounted = try engine.recountCacheSize()
        try require(running == recounted, "the running size \(running) differs from a recount \(recounted)")
        try require(running > 0, "a non-empty cache has size 0")
        try engine.close()
        engine = try StorageEngine(store: try suite.openStore(directory))
        defer { try? engine.close() }
        try require(engine.cacheSizeBytes == running, "after reopen the size is \(engine.cacheSizeBytes), not \(running)")
        try engine.removeAllServerCache()
        try require(engine.cacheSizeBytes == 0 && (try engine.recountCacheSize()) == 0, "an emptied cache does not count 0 bytes")
    }
}
