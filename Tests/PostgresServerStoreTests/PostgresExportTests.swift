import CoreTree
import Foundation
import Logging
import PostgresServerStore
import ServerCore
import Testing
import TestSupport

extension PostgresTests {
/// A shared namespace exported from PostgreSQL while it is written: one `REPEATABLE READ`
/// snapshot, in an order that keeps every subtree together.
@Suite("Export from PostgreSQL")
struct PostgresExportTests {
    /// Counters at either end, a subtree with siblings whose names extend its own with bytes
    /// below and above `/` (`a!x`, `a-x`: their rows sort between `a`'s own and its children's
    /// by plain path order), priorities on leaves, objects and the root, and ~2 MB between.
    static func tree(counter: Int) -> Node {
        var root = Node.empty
        func put(_ path: TreePath, _ node: Node) { root = root.updatingChild(at: path, to: node) }
        let filler = String(repeating: "q", count: 1000)
        put("/bulk", Node(children: (0..<2000).map { (key: ChildKey("m\($0)"), value: Node(.string(filler))) }))
        put("/aaa/count", Node(.number(Double(counter))))
        put("/zzz/count", Node(.number(Double(counter))))
        put("/tree/a/b", Node(.number(1), priority: .string("leaf")))
        put("/tree/a/c/d", Node(.string("deep \"quoted\"")))
        put("/tree/a!x", Node(.bool(true)))
        put("/tree/a-x", Node(.number(2)))
        put("/tree/a0", Node(.number(3)))
        put("/tree/a", root.child(at: "/tree/a").withPriority(.number(4)))
        return root.withPriority(.string("root"))
    }

    @Test("a namespace exported while nodes commit is one moment, priorities kept, through the store and the provider")
    func oneMoment() async throws {
        let provider = try PostgresStoreProvider(url: try TestPostgres.url(), logger: Logger(label: "test.postgres"))
        let namespace = TestPostgres.freshNamespace("export")
        do {
            let store = try await provider.openStore(namespace: namespace)
            let database = try await NamespaceDatabase.open(name: namespace, store: store)
            let expected = Self.tree(counter: 5)
            guard case .committed = await database.write(.set(path: .root, node: expected), as: .admin) else {
                throw SupportFailure("the test data was not written")
            }
            var document: [UInt8] = []
            var pieces = 0
            try await database.exportSnapshot { piece in
                document += piece
                pieces += 1
                let value = Node(.number(Double(5 + pieces)))
                let result = await database.write(.update(path: .root, children: [(path: TreePath(unchecked: "/aaa/count"), node: value), (path: TreePath(unchecked: "/zzz/count"), node: value)]), as: .admin)
                guard case .committed = result else { throw SupportFailure("the write during the export failed: \(result)") }
            }
            #expect(pieces >= 4, "the export came in \(pieces) pieces")
            let exported = try Node(json: document)
            #expect(exported.child(at: "/zzz/count") == Node(.number(5)))
            // Compared apart from #expect, which would print both trees (megabytes) on failure.
            let sameAsWritten = exported == expected
            #expect(sameAsWritten, "the export differs from the data written before it began")
            #expect(try await database.read("/zzz/count", as: .admin) == Node(.number(Double(5 + pieces))))

            // The provider's export (rtdb-server export --backend postgres) reads the same rows.
            var again: [UInt8] = []
            try await provider.exportNamespace(namespace) { again += $0 }
            #expect(try Node(json: again) == expected.updatingChild(at: "/aaa/count", to: Node(.number(Double(5 + pieces))))
                .updatingChild(at: "/zzz/count", to: Node(.number(Double(5 + pieces)))))
            var never: [UInt8] = []
            try await provider.exportNamespace(TestPostgres.freshNamespace("never")) { never += $0 }
            #expect(String(decoding: never, as: UTF8.self) == "null\n")
            try await store.close()
        } catch {
            await provider.shutdown()
            throw error
        }
        await provider.shutdown()
    }
}
}
