import CoreTree
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import ServerCore
import Testing
import TestSupport

/// A namespace exported while it serves (``NamespaceDatabase/exportSnapshot(_:)``) on every
/// embedded backend: writes that land during the export are wholly absent from it, and the rest
/// (priorities, long paths, escapes) is what was written.
@Suite("Snapshot export while serving")
struct SnapshotExportTests {
    static let backends: [StorageBackend] = [.sqlite, .lmdb, .leveldb, .memory]

    /// The test tree of the import and export tests, with two counters at either end of the key
    /// order (`aaa` first, `zzz` last) and, between them, more data than the export's pipe and
    /// pieces hold (about 3 MB): a scan that was not one snapshot would read `zzz` after the
    /// writes the test makes once the first piece arrives.
    static func tree(counter: Int) -> Node {
        var root = NamespaceTransferTests.tree(seed: 7)
        let filler = String(repeating: "x", count: 1000)
        root = root.updatingChild(at: "/bulk", to: Node(children: (0..<3000).map {
            (key: ChildKey("m\($0)"), value: Node(.string(filler), priority: $0 % 7 == 0 ? .number(Double($0)) : nil))
        }))
        root = root.updatingChild(at: "/aaa", to: Node(children: [(key: ChildKey("count"), value: Node(.number(Double(counter))))], priority: .string("first")))
        root = root.updatingChild(at: "/zzz/count", to: Node(.number(Double(counter))))
        return root
    }

    @Test("an export during writes holds one moment: the counters written together agree, the rest as written",
          arguments: backends.map(\.name))
    func oneMoment(_ backendName: String) async throws {
        let backend = try #require(Self.backends.first { $0.name == backendName })
        let directory = NamespaceTransferTests.temporary("snapshot-\(backendName)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await EmbeddedServerStore.open(backend, directory: directory)
        let database = try await NamespaceDatabase.open(name: "chat", store: store)
        let expected = Self.tree(counter: 5)
        guard case .committed = await database.write(.set(path: .root, node: expected), as: .admin) else {
            Issue.record("the test data was not written")
            return
        }

        // Each piece the export hands over is followed by a write of both counters in one
        // update, acknowledged (durable) before the export goes on.
        var pieces = 0
        var document: [UInt8] = []
        try await database.exportSnapshot { piece in
            document += piece
            pieces += 1
            let value = Node(.number(Double(5 + pieces)))
            let result = await database.write(.update(path: .root, children: [(path: TreePath(unchecked: "/aaa/count"), node: value), (path: TreePath(unchecked: "/zzz/count"), node: value)]), as: .admin)
            guard case .committed = result else { throw SupportFailure("the write during the export failed: \(result)") }
        }
        let written = pieces
        #expect(written >= 8, "the export came in \(written) pieces: too few for writes to land while it ran")
        let exported = try Node(json: document)
        #expect(exported.child(at: "/aaa/count") == Node(.number(5)))
        #expect(exported.child(at: "/zzz/count") == Node(.number(5)))
        // Compared apart from #expect, which would print both trees (megabytes) on failure.
        let sameAsWritten = exported == expected
        #expect(sameAsWritten, "the export differs from the data written before it began")
        // The writes did land, during the export.
        #expect(try await database.read("/zzz/count", as: .admin) == Node(.number(Double(5 + written))))
        try await store.close()
    }

    @Test("an export of an empty namespace is null")
    func empty() async throws {
        let directory = NamespaceTransferTests.temporary("snapshot-empty")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await EmbeddedServerStore.open(.sqlite, directory: directory)
        var document: [UInt8] = []
        try await store.exportSnapshot { document += $0 }
        #expect(String(decoding: document, as: UTF8.self) == "null\n")
        try await store.close()
    }

    @Test("an export whose receiver fails ends, releases its snapshot, and the store goes on")
    func receiverFails() async throws {
        let directory = NamespaceTransferTests.temporary("snapshot-fail")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await EmbeddedServerStore.open(.lmdb, directory: directory)
        try await store.commit(StoreChange(writes: [StoreWrite(path: .root, node: Self.tree(counter: 1))]))
        await #expect(throws: SupportFailure.self) {
            try await store.exportSnapshot { _ in throw SupportFailure("the client went away") }
        }
        try await store.commit(StoreChange(writes: [StoreWrite(path: "/zzz/count", node: Node(.number(2)))]))
        var document: [UInt8] = []
        try await store.exportSnapshot { document += $0 }
        #expect(try Node(json: document).child(at: "/zzz/count") == Node(.number(2)))
        try await store.close()
    }
}
