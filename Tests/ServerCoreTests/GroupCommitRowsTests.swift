import CoreTree
import Persistence
@testable import ServerCore
import TestSupport
import Testing

/// A group commit deletes each shared ancestor's row once, not once per write: the stored tree
/// must still be exactly the tree in memory after every group, whatever the order of writes at,
/// above, below and beside each other.
@Suite("Embedded store group commits")
struct GroupCommitRowsTests {
    private static let keys: [ChildKey] = ["a", "b", "c"]

    private static func randomPath(_ random: inout SplitMix64) -> TreePath {
        let depth = 1 + Int(random.next() % 3)
        return TreePath(keys: (0..<depth).map { _ in keys[Int(random.next() % UInt64(keys.count))] })
    }

    private static func randomNode(_ random: inout SplitMix64) -> Node {
        let number = Node(.number(Double(random.next() % 100)))
        switch random.next() % 4 {
        case 0: return .empty
        case 1: return number
        case 2: return Node(children: ["x": number])
        default: return Node(children: ["a": number, "b": Node(children: ["c": Node(.string("s"))])])
        }
    }

    /// Every cache row (key and value) in `memory`.
    private static func rows(_ memory: MemoryStore) throws -> [[UInt8]: [UInt8]] {
        var rows: [[UInt8]: [UInt8]] = [:]
        try memory.scan(KeyRange(prefix: Array("c/".utf8)), reverse: false) { key, value in
            rows[key] = value
            return true
        }
        return rows
    }

    @Test("400 random groups of up to 8 writes each: the store loads exactly the tree in memory after every commit, with no stale row")
    func randomGroups() async throws {
        var random = SplitMix64(seed: 19)
        let memory = MemoryStore()
        let store = try EmbeddedServerStore(store: memory)
        var root = Node.empty
        for group in 0..<400 {
            var changed: [TreePath] = []
            for _ in 0..<(1 + Int(random.next() % 8)) {
                let path = Self.randomPath(&random)
                root = root.updatingChild(at: path, to: Self.randomNode(&random))
                changed.append(path)
            }
            try await store.commit(StoreChange(root: root, changedPaths: changed))
            let loaded = try await store.load()
            #expect(loaded == root, "group \(group): \(changed.map(\.wireForm))")
            // The same tree written whole into an empty store: row for row what the groups left.
            let fresh = MemoryStore()
            try await EmbeddedServerStore(store: fresh).commit(StoreChange(root: root, changedPaths: [.root]))
            let stale = try Self.rows(memory).count - Self.rows(fresh).count
            #expect(try Self.rows(memory) == Self.rows(fresh), "group \(group): \(stale) rows more than the tree's own")
            if loaded != root || stale != 0 { break }
        }
    }
}
