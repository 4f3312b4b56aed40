// coretree-benchmark: measures JSON parsing, child updates and memory per child of CoreTree.
//
// Run in release mode: `swift run -c release coretree-benchmark`. Figures are for comparison
// within one run on one machine (ratios), never asserted by tests.
import CoreTree
import Foundation
import TestSupport

#if canImport(CMallocInfo) && os(Linux)
import CMallocInfo
#endif


/// Bytes currently allocated with malloc (glibc's `mallinfo2().uordblks`).
func allocatedBytes() -> Int {
    #if canImport(CMallocInfo) && os(Linux)
    return Int(mallinfo2().uordblks)
    #else
    return 0
    #endif
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Times `body` `runs` times and returns the fastest run in seconds.
func fastest(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    let clock = ContinuousClock()
    for _ in 0..<runs {
        let elapsed = try clock.measure(body)
        best = min(best, seconds(elapsed))
    }
    return best
}

/// A document shaped like typical app data: user records with strings, numbers, flags and lists.
func makeDocument(targetBytes: Int, random: inout SplitMix64) -> [UInt8] {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"]
    var users = Node.empty
    var index = 0
    var estimated = 0
    var generator = PushIDGenerator(source: SplitMix64(seed: random.next()))
    while estimated < targetBytes {
        var user = Node.empty
        user = user.updatingImmediateChild("name", to: Node(.string("\(words[Int(random.next() % 10)]) \(words[Int(random.next() % 10)]) ✔")))
        user = user.updatingImmediateChild("age", to: Node(.number(Double(random.next() % 90))))
        user = user.updatingImmediateChild("score", to: Node(.number(Double(random.next() % 1_000_000) / 997.0)))
        user = user.updatingImmediateChild("active", to: Node(.bool(random.next() % 2 == 0)))
        var tags = Node.empty
        for tag in 0..<Int(random.next() % 5) {
            tags = tags.updatingImmediateChild(ChildKey(String(tag)), to: Node(.string(words[Int(random.next() % 10)])))
        }
        user = user.updatingImmediateChild("tags", to: tags)
        var address = Node.empty
        address = address.updatingImmediateChild("street", to: Node(.string("\(random.next() % 999) \(words[Int(random.next() % 10)]) street \"quoted\"")))
        address = address.updatingImmediateChild("zip", to: Node(.string(String(random.next() % 100_000))))
        user = user.updatingImmediateChild("address", to: address)
        let key = generator.next(milliseconds: 1_700_000_000_000 + Int64(index))
        users = users.updatingImmediateChild(ChildKey(key), to: user)
        estimated += 185
        index += 1
    }
    return Node.empty.updatingImmediateChild("users", to: users).jsonBytes(format: .plain)
}

func benchmarkParse() {
    var random = SplitMix64(seed: 42)
    let document = makeDocument(targetBytes: 10 * 1024 * 1024, random: &random)
    let megabytes = Double(document.count) / 1_048_576
    var parsed = Node.empty
    let nodeSeconds = fastest(runs: 5) { parsed = try! Node(json: document) }
    let data = Data(document)
    let foundationSeconds = fastest(runs: 5) { _ = try! JSONSerialization.jsonObject(with: data) }
    precondition(parsed.child(at: "users").childCount > 40_000, "document too small")
    print(String(format: "parse %.1f MB document: Node(json:) %.1f MB/s, JSONSerialization %.1f MB/s, ratio %.2fx",
                 megabytes, megabytes / nodeSeconds, megabytes / foundationSeconds, foundationSeconds / nodeSeconds))
    let writeSeconds = fastest(runs: 5) { _ = parsed.jsonBytes(format: .plain) }
    print(String(format: "serialise the same document: %.1f MB/s", megabytes / writeSeconds))
}

func makeWideNode(children: Int) -> Node {
    var entries: [(key: ChildKey, value: Node)] = []
    entries.reserveCapacity(children)
    for index in 0..<children {
        // "c0000000" ... : short keys (inline strings), small number leaves.
        var key = String(index)
        key = "c" + String(repeating: "0", count: 7 - key.count) + key
        entries.append((ChildKey(key), Node(.number(Double(index)))))
    }
    return Node(children: SortedMap(sortedUniqueElements: entries))
}

func benchmarkWideNode() {
    let childCount = 1_000_000
    let before = allocatedBytes()
    var node = makeWideNode(children: childCount)
    let after = allocatedBytes()
    let perChild = Double(after - before) / Double(childCount)
    print(String(format: "memory: %.1f bytes per small leaf child of a %d-child node (malloc'd bytes)", perChild, childCount))

    var random = SplitMix64(seed: 7)
    let updateCount = 100_000
    var keys: [ChildKey] = []
    keys.reserveCapacity(updateCount)
    for _ in 0..<updateCount {
        // Two thirds replace an existing child, one third adds a new one.
        let index = Int(random.next() % UInt64(childCount * 3 / 2))
        var key = String(index)
        key = "c" + String(repeating: "0", count: max(0, 7 - key.count)) + key
        keys.append(ChildKey(key))
    }
    let clock = ContinuousClock()
    // In place: the node's children are not shared, so the path is updated without copying.
    let inPlaceElapsed = clock.measure {
        for (offset, key) in keys.enumerated() {
            node.updateImmediateChild(key, to: Node(.number(Double(offset))))
        }
    }
    print(String(format: "updates in place: %.0f random child updates/s on a %d-child node (%d updates, %.3f s)",
                 Double(updateCount) / seconds(inPlaceElapsed), childCount, updateCount, seconds(inPlaceElapsed)))
    // Persistent: every update yields a new version sharing all but the path with the old one.
    let persistentElapsed = clock.measure {
        for (offset, key) in keys.enumerated() {
            node = node.updatingImmediateChild(key, to: Node(.number(Double(-offset))))
        }
    }
    print(String(format: "persistent updates: %.0f random child updates/s, each copying its path (%.3f s)",
                 Double(updateCount) / seconds(persistentElapsed), seconds(persistentElapsed)))

    let deepElapsed = clock.measure {
        var tree = Node.empty.updatingImmediateChild("root", to: node)
        for (offset, key) in keys.prefix(10_000).enumerated() {
            tree = tree.updatingChild(at: TreePath(keys: ["root", key, "leaf"]), to: Node(.number(Double(offset))))
        }
        precondition(!tree.isEmpty)
    }
    print(String(format: "nested updates: %.0f updates/s at depth 3 under the same node",
                 10_000 / seconds(deepElapsed)))
    precondition(node.childCount >= childCount)
}

print("coretree-benchmark (release build, one run, this machine)")
benchmarkParse()
benchmarkWideNode()
