import CoreTree
@testable import ServerCore
import TestSupport
import Testing

/// The resident tree against a whole tree kept beside it (the model): whatever it holds must be
/// exactly the model's data at that place, after any mix of writes, loads that race writes,
/// holds and evictions under a tiny budget.
@Suite("Resident tree")
struct ResidentTreeTests {
    private static let keys: [ChildKey] = ["a", "b", "c"]

    private static func randomPath(_ random: inout SplitMix64, maxDepth: Int = 3) -> TreePath {
        TreePath(keys: (0..<Int(random.next() % UInt64(maxDepth + 1))).map { _ in keys[Int(random.next() % 3)] })
    }

    private static func randomNode(_ random: inout SplitMix64) -> Node {
        let number = Node(.number(Double(random.next() % 100)))
        switch random.next() % 5 {
        case 0: return .empty
        case 1: return number
        case 2: return Node(.string(String(repeating: "s", count: Int(random.next() % 40))))
        case 3: return Node(children: ["x": number], priority: .number(1))
        default: return Node(children: ["a": number, "b": Node(children: ["c": Node(.string("t"))])])
        }
    }

    @Test("3,000 random steps under a 600-byte budget: resident data always equals the model's, held paths stay resident")
    func againstTheModel() async throws {
        for seed in UInt64(1)...6 {
            // Hands its pool thread back between seeds: CPU-bound tests that never suspend stall the
            // whole parallel suite on a two-thread pool.
            await Task.yield()
            var random = SplitMix64(seed: seed)
            var model = Node.empty
            var versions: [Node] = [model]
            var tree = ResidentTree(budget: 600)
            var held: [TreePath] = []
            // Loads under way: the path and the version of the data the store returned.
            var loads: [(path: TreePath, version: Int)] = []
            for step in 0..<3000 {
                if step % 100 == 0 { await Task.yield() }
                switch random.next() % 10 {
                case 0...3:
                    let write = StoreWrite(path: Self.randomPath(&random), node: Self.randomNode(&random))
                    model = model.updatingChild(at: write.path, to: write.node)
                    versions.append(model)
                    tree.apply(write, version: UInt64(versions.count - 1))
                case 4, 5:
                    // A read of the store starts now; it finishes some steps later.
                    loads.append((Self.randomPath(&random), versions.count - 1))
                case 6:
                    guard !loads.isEmpty else { continue }
                    let load = loads.remove(at: Int(random.next() % UInt64(loads.count)))
                    tree.insert(StoredData(node: versions[load.version].child(at: load.path), version: UInt64(load.version)), at: load.path)
                case 7:
                    let path = Self.randomPath(&random)
                    if tree.isResident(path) {
                        tree.hold(path)
                        held.append(path)
                    }
                case 8:
                    guard !held.isEmpty else { continue }
                    tree.release(held.remove(at: Int(random.next() % UInt64(held.count))))
                default:
                    tree.evict()
                }
                let oldest = loads.map(\.version).min() ?? versions.count - 1
                tree.trimHistory(through: UInt64(oldest))
                for path in held {
                    #expect(tree.isResident(path), "seed \(seed) step \(step): held \(path) was evicted")
                }
                for _ in 0..<4 {
                    let path = Self.randomPath(&random, maxDepth: 4)
                    if let resident = tree.read(path) {
                        let expected = model.child(at: path)
                        #expect(resident.jsonString(format: .export) == expected.jsonString(format: .export),
                                "seed \(seed) step \(step): \(path) resident \(resident.jsonString(format: .export)), model \(expected.jsonString(format: .export))")
                        if resident != expected { return }
                    }
                }
            }
            // With no load under way, no write needs keeping for one.
            tree.trimHistory(through: UInt64(versions.count - 1))
            #expect(tree.history.isEmpty)
        }
    }

    @Test("A write where nothing is resident touches no memory; eviction frees unheld data first and keeps held data")
    func budgets() {
        var tree = ResidentTree(budget: 400)
        tree.insert(StoredData(node: Node(children: ["m1": Node(.string("hello")), "m2": Node(.string("there"))]), version: 0), at: "rooms/r1")
        let before = tree.bytes
        #expect(before > 0 && tree.entryCount == 1)
        tree.apply(StoreWrite(path: "rooms/r2/m1", node: Node(.string(String(repeating: "x", count: 1000)))), version: 1)
        #expect(tree.bytes == before, "a write to an unwatched location changed the cache bytes")
        #expect(!tree.isResident("rooms/r2"))
        tree.trimHistory(through: 1)
        tree.hold("rooms/r1/m1")
        tree.insert(StoredData(node: Node(.string(String(repeating: "y", count: 600))), version: 1), at: "users/u1")
        #expect(tree.bytes > tree.budget)
        let evicted = tree.evict()
        #expect(evicted.count == 2, "evicted \(evicted)")
        #expect(tree.isResident("rooms/r1/m1") && tree.read("rooms/r1/m1") == Node(.string("hello")))
        #expect(!tree.isResident("rooms/r1/m2") && !tree.isResident("users/u1"))
        #expect(tree.bytes <= tree.budget)
        tree.release("rooms/r1/m1")
        tree.insert(StoredData(node: Node(.string(String(repeating: "z", count: 600))), version: 1), at: "users/u2")
        tree.evict()
        #expect(!tree.isResident("rooms/r1/m1"), "released data was kept over budget")
    }
}
