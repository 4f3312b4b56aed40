import CoreTree
import QueryEngine
import Testing

/// Persistence that records what the sync tree asks of it and can be told to fail saves.
final class RecordingPersistence: PersistenceManaging {
    var log: [String] = []
    var savedWrites: [Int64: String] = [:]
    var stored: [TreePath: (node: Node, complete: Bool)] = [:]
    var failSaves = false

    struct SaveFailed: Error {}

    func saveUserOverwrite(path: TreePath, node: Node, writeId: Int64) throws {
        if failSaves { throw SaveFailed() }
        savedWrites[writeId] = "set \(path.wireForm) \(node.jsonString())"
    }

    func saveUserMerge(path: TreePath, children: CompoundWrite, writeId: Int64) throws {
        if failSaves { throw SaveFailed() }
        var parts: [String] = []
        children.forEachWrite { path, node in parts.append("\(path.wireForm)=\(node.jsonString())") }
        let described = parts.joined(separator: ",")
        savedWrites[writeId] = "update \(path.wireForm) \(described)"
    }

    func removeUserWrite(writeId: Int64) { savedWrites[writeId] = nil }
    func removeAllUserWrites() { savedWrites.removeAll() }
    func applyUserWriteToServerCache(path: TreePath, node: Node) {}
    func applyUserWriteToServerCache(path: TreePath, merge: CompoundWrite) {}
    func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool) { stored[query.path] ?? (.empty, false) }
    func updateServerCache(query: QuerySpec, node: Node) {}
    func updateServerCache(path: TreePath, merge: CompoundWrite) {}
    func setQueryActive(_ query: QuerySpec) { log.append("active \(query.path.wireForm)") }
    func setQueryInactive(_ query: QuerySpec) { log.append("inactive \(query.path.wireForm)") }
    func setQueryComplete(_ query: QuerySpec) {}
}

@Suite("SyncTree: reading the cache once, and the life of a write's record")
struct SyncTreeCacheReadTests {
    @Test("cachedValue answers from complete memory data, with pending writes and the query's filter, and starts no listen")
    func cachedValueFromMemory() throws {
        let provider = CapturingListenProvider()
        let tree = SyncTree(listenProvider: provider)
        #expect(tree.cachedValue(for: .default(at: "a")) == nil, "nothing is known yet")
        _ = tree.addEventRegistration(TestRegistration("r"), for: .default(at: .root))
        _ = tree.applyServerOverwrite(path: .root, node: try Node(jsonString: #"{"a":{"x":1,"y":2}}"#))
        _ = tree.applyListenComplete(path: .root)
        #expect(tree.cachedValue(for: .default(at: "a")) == (try Node(jsonString: #"{"x":1,"y":2}"#)))
        _ = try tree.applyUserOverwrite(path: "a/z", node: Node(.number(3)), writeId: 1)
        #expect(tree.cachedValue(for: .default(at: "a")) == (try Node(jsonString: #"{"x":1,"y":2,"z":3}"#)))
        let firstOne = QuerySpec(path: "a", params: try QueryParams().orderedBy(.key).limitedToFirst(1))
        #expect(tree.cachedValue(for: firstOne) == (try Node(jsonString: #"{"x":1}"#)))
        #expect(provider.log == ["start /|default"], "reading started and stopped no listen")
    }

    @Test("cachedValue uses persisted data only when it is complete, and marks no query active")
    func cachedValueFromPersistence() throws {
        let persistence = RecordingPersistence()
        persistence.stored["done"] = (try Node(jsonString: #"{"k":"v"}"#), true)
        persistence.stored["partial"] = (try Node(jsonString: #"{"k":"v"}"#), false)
        let tree = SyncTree(listenProvider: CapturingListenProvider(), persistence: persistence)
        #expect(tree.cachedValue(for: .default(at: "done")) == (try Node(jsonString: #"{"k":"v"}"#)))
        #expect(tree.cachedValue(for: .default(at: "partial")) == nil)
        _ = try tree.applyUserOverwrite(path: "partial", node: Node(.string("mine")), writeId: 1)
        #expect(tree.cachedValue(for: .default(at: "partial")) == Node(.string("mine")), "a set makes the location known")
        #expect(persistence.log.isEmpty, "a one-time read is not a listener: \(persistence.log)")
    }

    @Test("The sync tree saves a write's record in the form given and removes it when the write is acknowledged")
    func writeRecordLife() throws {
        let persistence = RecordingPersistence()
        let tree = SyncTree(listenProvider: CapturingListenProvider(), persistence: persistence)
        let placeholder = try Node(jsonString: #"{".sv":"timestamp"}"#)
        _ = try tree.applyUserOverwrite(path: "t", node: Node(.number(1_700_000_000_000)), writeId: 1, stored: placeholder)
        _ = try tree.applyUserMerge(
            path: "m", children: [(path: "n", node: Node(.number(2)))], writeId: 2, stored: [(path: "n", node: placeholder)])
        #expect(persistence.savedWrites == [
            1: #"set /t {".sv":"timestamp"}"#,
            2: #"update /m /n={".sv":"timestamp"}"#,
        ])
        #expect(tree.calcCompleteEventCache(path: "t") == Node(.number(1_700_000_000_000)), "listeners see the estimate")
        _ = tree.ackUserWrite(writeId: 1)
        #expect(persistence.savedWrites.keys.sorted() == [2])
        _ = tree.ackUserWrite(writeId: 2, revert: true)
        #expect(persistence.savedWrites.isEmpty, "a rejected write's record goes too")
    }

    @Test("A write whose record cannot be saved changes nothing")
    func failedSaveChangesNothing() throws {
        let persistence = RecordingPersistence()
        let tree = SyncTree(listenProvider: CapturingListenProvider(), persistence: persistence)
        _ = tree.addEventRegistration(TestRegistration("r"), for: .default(at: "a"))
        persistence.failSaves = true
        #expect(throws: RecordingPersistence.SaveFailed.self) {
            try tree.applyUserOverwrite(path: "a", node: Node(.number(1)), writeId: 1)
        }
        #expect(throws: RecordingPersistence.SaveFailed.self) {
            try tree.applyUserMerge(path: "a", children: [(path: "b", node: Node(.number(1)))], writeId: 2)
        }
        #expect(tree.pendingWrites.write(withId: 1) == nil && tree.pendingWrites.write(withId: 2) == nil)
        #expect(tree.calcCompleteEventCache(path: "a") == .empty)
    }
}
