import CoreTree
import Foundation
import Logging
import PostgresServerStore
import ServerCore
import SyncProtocol
import Testing
import TestSupport

extension PostgresTests {
/// Exactly-once writes when several nodes share a namespace: a client that reconnects to another
/// node and sends a write again gets `ok`, and the write counts once.
@Suite("PostgreSQL exactly-once writes")
struct SharedExactlyOnceTests {
    @Test("a stamped write applied through node A is not applied again through node B, also after B reloads")
    func repeatOnAnotherNode() async throws {
        let url = try TestPostgres.url()
        let namespace = TestPostgres.freshNamespace("once")
        let nodeA = try PostgresStoreProvider(url: url, logger: Logger(label: "test.a"))
        let nodeB = try PostgresStoreProvider(url: url, logger: Logger(label: "test.b"))
        var failure: (any Error)?
        do {
            let (storeA, storeB) = (try await nodeA.openStore(namespace: namespace), try await nodeB.openStore(namespace: namespace))
            let (a, b) = (
                try await NamespaceDatabase.open(name: namespace, store: storeA), try await NamespaceDatabase.open(name: namespace, store: storeB))
            let counter = TreePath(unchecked: "counter")
            let increment = CoreTree.ServerValue.increment(1)
            let stamp = WriteStamp(client: "roaming", sequence: 5, floor: 5)
            guard case .committed = await a.write(.set(path: counter, node: increment), stamp: stamp, as: .admin) else {
                throw SupportFailure("the first write did not commit")
            }
            let repeated = await b.write(.set(path: counter, node: increment), stamp: stamp, as: .admin)
            guard case .committed(let value) = repeated else { throw SupportFailure("the repeat was not answered ok: \(repeated)") }
            #expect(value == Node(.number(1)), "B answers with the data as A left it")
            #expect(try await b.read(counter, as: .admin) == Node(.number(1)))
            // A node opened afterwards loads the record from the store.
            let storeC = try await nodeB.openStore(namespace: namespace)
            let c = try await NamespaceDatabase.open(name: namespace, store: storeC)
            _ = await c.write(.set(path: counter, node: increment), stamp: stamp, as: .admin)
            _ = await c.write(.set(path: counter, node: increment), stamp: WriteStamp(client: "roaming", sequence: 6, floor: 5), as: .admin)
            #expect(try await c.read(counter, as: .admin) == Node(.number(2)))
            try await a.close()
            try await b.close()
            try await c.close()
        } catch {
            failure = error
        }
        await nodeA.shutdown()
        await nodeB.shutdown()
        if let failure { throw failure }
    }
}
}
