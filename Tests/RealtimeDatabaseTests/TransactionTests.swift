import Foundation
import SyncClient
import SyncProtocol
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// Transactions: run locally at once, compare-and-set on the server, queued while offline and
/// run on reconnect, retried on `datastale` at most 25 times.
@Suite("Transactions")
struct TransactionTests {
    private func increment(_ data: MutableData) -> TransactionResult {
        data.value = (data.value as? Int ?? 0) + 1
        return .success(withValue: data)
    }

    @Test func aTransactionWhoseIncrementOverflowsFailsAndChangesNothing() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=finite")
        database.goOffline()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "big")
        ref.write(1e308)
        let result = Recorder()
        ref.runTransactionBlock({ data in
            data.value = ServerValue.increment(NSNumber(value: 1e308))
            return .success(withValue: data)
        }, andCompletionBlock: { error, committed, _ in
            result.record("\((error as? DatabaseError)?.code.rawValue ?? "none") \(committed)")
        })
        #expect(try await result.waitFor("invalid_args false"))
        #expect(try await ref.singleEvent(of: .value).value as? Double == 1e308)
        // A plain set of an overflowing increment is refused at the call.
        await #expect(throws: DatabaseError.self) { try await ref.setValue(ServerValue.increment(NSNumber(value: 1e308))) }
        #expect(try await ref.singleEvent(of: .value).value as? Double == 1e308)
    }

    @Test func anOfflineTransactionRunsOnReconnectOnFreshData() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("tx")
        try await server.write("counter", json: "10", namespace: namespace)
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let counter = database.reference(withPath: "counter")
        let seen = Recorder()
        counter.observe(.value) { seen.record("\($0.value ?? "nil")") }
        #expect(try await seen.waitFor("10"))

        database.goOffline()
        try await server.write("counter", json: "20", namespace: namespace)
        let result = Recorder()
        counter.runTransactionBlock({ data in
            data.value = (data.value as? Int ?? 0) + 1
            return .success(withValue: data)
        }, andCompletionBlock: { error, committed, snapshot in
            result.record("\(error.map { "\($0)" } ?? "ok") \(committed) \(snapshot?.value ?? "nil")")
        })
        // Run at once on the cached 10, queued while offline.
        #expect(try await seen.waitFor("11"))
        // The barrier: everything the client was asked so far has run and called back.
        await database.settle()
        #expect(result.count == 0)
        #expect(try await server.read("counter", namespace: namespace) as? Int == 20)

        database.goOnline()
        #expect(try await result.waitFor(count: 1, timeout: .seconds(20)))
        #expect(result.all == ["ok true 21"], "rerun on the server's 20 after datastale")
        #expect(try await server.read("counter", namespace: namespace) as? Int == 21)
        #expect(try await seen.waitFor("21"))
    }

    @Test("A committed transaction reports the value it committed, online and when started offline with no listener")
    func theCompletionGetsTheCommittedValue() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("tx-result")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let online = try await database.reference(withPath: "online").runTransactionBlock { data in
            data.value = ["n": 1, "s": "x"]
            return .success(withValue: data)
        }
        #expect(online.0)
        #expect((online.1.value as? [String: Any])?["n"] as? Int == 1, "\(String(describing: online.1.value))")

        database.goOffline()
        let result = Recorder()
        database.reference(withPath: "queued").runTransactionBlock({ data in
            data.value = (data.value as? Int ?? 0) + 5
            return .success(withValue: data)
        }, andCompletionBlock: { error, committed, snapshot in
            result.record("\(error.map { "\($0)" } ?? "ok") \(committed) \(snapshot?.value ?? "nil")")
        })
        // The transaction has run on the empty cache and waits in the offline connection.
        await database.settle()
        #expect(result.count == 0)
        database.goOnline()
        #expect(try await result.waitFor(count: 1, timeout: .seconds(20)))
        #expect(result.all == ["ok true 5"], "the snapshot is the committed value, not an empty cache")
        #expect(try await server.read("queued", namespace: namespace) as? Int == 5)
    }

    @Test("ServerValue.timestamp() as a priority: in setValue(_:andPriority:) and in a transaction, resolved by the server")
    func serverTimestampAsPriority() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("sv-priority")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let written = Recorder()
        database.reference(withPath: "set").setValue("v", andPriority: ServerValue.timestamp()) { error, _ in
            written.record(error.map { "\($0)" } ?? "ok")
        }
        #expect(try await written.waitFor("ok"))
        let committed = try await database.reference(withPath: "tx").runTransactionBlock { data in
            data.value = 1
            data.priority = ServerValue.timestamp()
            return .success(withValue: data)
        }
        #expect(committed.0, "the transaction completes")
        for path in ["set", "tx"] {
            let exported = try await restRequest("GET", server.restURL(path, namespace: namespace) + "&format=export").json as? [String: Any]
            #expect((exported?[".priority"] as? Double ?? 0) > 1_600_000_000_000, "\(path): \(String(describing: exported))")
        }
    }

    @Test func concurrentIncrementsFromTwoClientsAllCount() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("tx2")
        let clients = try (0..<2).map { _ in try Clients.make(server, namespace: namespace) }
        defer { for client in clients { client.shutdown() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                for _ in 0..<10 {
                    group.addTask {
                        let (committed, _) = try await client.reference(withPath: "likes").runTransactionBlock(self.increment)
                        #expect(committed)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await server.read("likes", namespace: namespace) as? Int == 20)
    }

    @Test func aTransactionGivesUpAfter25Retries() async throws {
        // A server whose data changes before every compare-and-set lands.
        let fake = FakeServer()
        let value = Recorder()
        fake.start { request, side in
            switch request.action {
            case "q":
                side.sendMessage(#"{"t":"d","d":{"a":"d","b":{"p":"hot","d":0}}}"#)
                return (.ok, "{}")
            case "p":
                value.record("put")
                side.sendMessage(#"{"t":"d","d":{"a":"d","b":{"p":"hot","d":\#(value.count)}}}"#)
                return (.dataStale, "\"stale\"")
            default:
                return (.ok, "\"\"")
            }
        }
        defer { fake.stop() }
        let database = try Clients.make(url: "http://fake.invalid:1?ns=fake")
        database.transport = fake.transport
        defer { database.shutdown() }
        let outcome = try await #require(throws: DatabaseError.self) {
            _ = try await database.reference(withPath: "hot").runTransactionBlock(self.increment)
        }
        #expect(outcome.code == .maxRetries)
        #expect(value.count == 26, "one attempt and 25 retries, got \(value.count) compare-and-sets")
    }

    @Test func aSetAbortsAPendingTransaction() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=offline")
        database.goOffline()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "item")
        let result = Recorder()
        ref.runTransactionBlock({ data in
            data.value = "from transaction"
            return .success(withValue: data)
        }, andCompletionBlock: { error, committed, _ in
            result.record("\((error as? DatabaseError)?.code.rawValue ?? "none") \(committed)")
        })
        ref.write("from set")
        #expect(try await result.waitFor(count: 1))
        #expect(result.all == ["overriddenbyset false"])
        let snapshot = try await ref.singleEvent(of: .value)
        #expect(snapshot.value as? String == "from set")
    }
}
