import CoreTree
import Foundation
import QueryEngine
import Synchronization
import Testing
@testable import ServerCore

/// A store that takes its time to sync (so writes pile up behind a commit), counts commits, and
/// fails on demand.
final class SlowStore: ServerStore {
    private let state = Mutex((commits: 0, failNext: false, data: Node.empty, version: UInt64(0)))

    var commits: Int { state.withLock { $0.commits } }
    func failNextCommit() { state.withLock { $0.failNext = true } }

    func read(at path: TreePath, limit: Int) async throws -> StoredData {
        state.withLock { StoredData(node: $0.data.child(at: path), version: $0.version) }
    }
    func readShallow(at path: TreePath, limit: Int) async throws -> StoredShallowData {
        let node = state.withLock { $0.data.child(at: path) }
        if node.isLeaf { return StoredShallowData(leaf: node, children: [:]) }
        var children: [ChildKey: Node?] = [:]
        for (key, child) in node.children { children[key] = child.isLeaf ? child : nil }
        return StoredShallowData(leaf: nil, children: children)
    }
    func commit(_ change: StoreChange) async throws {
        // A slow disk, simulated (a suspension, not a blocked thread): writes arriving meanwhile
        // pile up into the next group.
        try await Task.sleep(for: .milliseconds(5))
        try state.withLock { state in
            if state.failNext {
                state.failNext = false
                throw ServerError(.storageFailed, "disk full (simulated)")
            }
            state.commits += 1
            state.version = change.version
            for write in change.writes { state.data = state.data.updatingChild(at: write.path, to: write.node) }
        }
    }
    func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws {
        let data = state.withLock { $0.data }
        try await write(Array(data.jsonString(format: .export).utf8))
    }
    func setting(named name: String) async throws -> [UInt8]? { nil }
    func settings(withPrefix prefix: String) async throws -> [StoreSetting] { [] }
    func saveSetting(named name: String, _ value: [UInt8]) async throws {}
    func close() async throws {}
}

/// Records what a listener hears.
final class RecordingSubscriber: DataSubscriber {
    private let updates = Mutex<[ListenUpdate]>([])
    func send(_ update: ListenUpdate) { updates.withLock { $0.append(update) } }
    var received: [ListenUpdate] { updates.withLock { $0 } }
}

@Suite("Namespace database")
struct NamespaceDatabaseTests {
    @Test("Concurrent writes share syncs (group commit), and every one is acknowledged once durable")
    func groupCommit() async throws {
        let store = SlowStore()
        let database = try await NamespaceDatabase.open(name: "g", store: store)
        let results = await withTaskGroup(of: WriteResult.self) { group in
            for index in 0..<100 {
                group.addTask { await database.write(.set(path: TreePath(unchecked: "items/\(index)"), node: Node(.number(Double(index)))), as: .admin) }
            }
            return await group.reduce(into: [WriteResult]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { if case .committed = $0 { true } else { false } })
        #expect(store.commits < 50, "100 writes took \(store.commits) syncs")
        #expect(try await store.load().child(at: TreePath(unchecked: "items")).childCount == 100)
    }

    @Test("A failed sync fails its writes and those after it, restores the last durable data and corrects listeners")
    func failedSyncRollsBack() async throws {
        let store = SlowStore()
        let database = try await NamespaceDatabase.open(name: "r", store: store)
        _ = await database.write(.set(path: TreePath(unchecked: "v"), node: Node(.string("durable"))), as: .admin)
        let listener = RecordingSubscriber()
        try await database.listen(listener, path: TreePath(unchecked: "v"), params: .default, tag: nil, as: .admin)
        store.failNextCommit()
        let result = await database.write(.set(path: TreePath(unchecked: "v"), node: Node(.string("lost"))), as: .admin)
        guard case .failed(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code == .storageFailed)
        #expect(try await database.read(TreePath(unchecked: "v"), as: .admin) == Node(.string("durable")))
        let last = try #require(listener.received.last)
        guard case .overwrite(let node) = last.change else {
            Issue.record("expected an overwrite")
            return
        }
        #expect(node == Node(.string("durable")), "listeners never keep data that was not stored")
        #expect(!listener.received.contains { if case .overwrite(let node) = $0.change { node == Node(.string("lost")) } else { false } })
    }

    @Test("Removing the last child under a leaf-free parent leaves no orphaned rows; removing under a leaf changes nothing")
    func replacementsForRemovals() async throws {
        let store = SlowStore()
        let database = try await NamespaceDatabase.open(name: "x", store: store)
        _ = await database.write(.set(path: TreePath(unchecked: "a/b/c"), node: Node(.number(1))), as: .admin)
        _ = await database.write(.set(path: TreePath(unchecked: "a/b/c"), node: .empty), as: .admin)
        #expect(try await store.load().isEmpty)
        _ = await database.write(.set(path: TreePath(unchecked: "leaf"), node: Node(.number(2))), as: .admin)
        _ = await database.write(.set(path: TreePath(unchecked: "leaf/under"), node: .empty), as: .admin)
        #expect(try await store.load().child(at: TreePath(unchecked: "leaf")) == Node(.number(2)))
    }
}
