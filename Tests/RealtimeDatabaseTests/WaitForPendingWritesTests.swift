import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import SyncClient
import TestSupport
import Testing

/// Beyond Firebase: `Database.waitForPendingWrites()` returns once every write made before the
/// call is acknowledged or rejected, through offline spells, reconnections and restarts.
@Suite("waitForPendingWrites()")
struct WaitForPendingWritesTests {
    @Test func returnsOnceTheServerHasEveryWriteMadeOffline() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("wait-offline")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        try await database.waitForPendingWrites()  // nothing pending: at once
        database.goOffline()
        for index in 0..<5 { database.reference(withPath: "items/i\(index)").write(index) }
        updateLocally(database.reference(withPath: "profile"), ["name": "Ada", "age": 36])
        let committed = Recorder()
        database.reference(withPath: "counter").runTransactionBlock({ data in
            data.value = (data.value as? Int ?? 0) + 1
            return .success(withValue: data)
        }, andCompletionBlock: { error, done, _ in committed.record(error == nil && done ? "committed" : "failed") })
        let waited = Recorder()
        database.waitForPendingWrites { error in waited.record(error.map { "\($0)" } ?? "done") }
        await database.settle()
        #expect(waited.all.isEmpty, "offline, nothing is acknowledged")

        database.goOnline()
        try await database.waitForPendingWrites()
        #expect(committed.all == ["committed"], "the transaction made before the call ended before it returned")
        #expect(try await waited.waitFor("done"))
        #expect(database.pendingWriteCount == 0)
        #expect((try await server.read("items", namespace: namespace) as? [String: Any])?.count == 5)
        #expect(try await server.read("profile/age", namespace: namespace) as? Int == 36)
        #expect(try await server.read("counter", namespace: namespace) as? Int == 1)
    }

    @Test func aRejectedWriteSettlesTheWaitAndItsCompletionRunsFirst() async throws {
        let rulesFile = NSTemporaryDirectory() + "rtdb-wait-rules-\(UUID().uuidString).json"
        _ = FileManager.default.createFile(
            atPath: rulesFile, contents: Data(#"{"rules": {".read": true, "open": {".write": true}, "locked": {".write": false}}}"#.utf8))
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        let server = try await ServerProcess.launch(backend: "memory", arguments: ["--rules", rulesFile])
        defer { Task { await server.shutDown() } }
        let database = try Clients.make(server, namespace: Clients.namespace("wait-rejected"))
        defer { database.shutdown() }
        database.goOffline()
        let outcomes = Recorder()
        database.reference(withPath: "locked/x").setValue(1) { error, _ in outcomes.record(error == nil ? "locked ok" : "locked refused") }
        database.reference(withPath: "open/x").setValue(2) { error, _ in outcomes.record(error == nil ? "open ok" : "open refused") }
        database.goOnline()
        try await database.waitForPendingWrites()
        #expect(Set(outcomes.all) == ["locked refused", "open ok"], "the writes' completions ran before it returned: \(outcomes.all)")
        #expect(database.pendingWriteCount == 0)
    }

    @Test func survivesAServerRestartAndWaitsForWritesRestoredFromDisk() async throws {
        let server = try await ServerProcess.launch(backend: "sqlite")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("wait-restart")
        let directory = Clients.temporaryDirectory("wait-restart")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        first.goOffline()
        for index in 0..<3 { first.reference(withPath: "queued/q\(index)").write(index) }
        first.shutdown()

        // The server goes away; the client restarts with the queue on disk and keeps trying.
        await server.stop()
        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        defer { database.shutdown() }
        #expect(database.pendingWriteCount == 3)
        let waited = Recorder()
        database.waitForPendingWrites { error in waited.record(error.map { "\($0)" } ?? "done") }
        database.reference(withPath: "later").write("made after the call")
        await database.settle()
        #expect(waited.all.isEmpty)

        try await server.restart()
        #expect(try await waited.waitFor("done"))
        #expect((try await server.read("queued", namespace: namespace) as? [String: Any])?.count == 3)
    }

    /// The exact moments, on the in-memory transport: the server answers when the test says.
    @Test func writesMadeAfterTheCallDoNotHoldItAndAReconnectDoesNotEndIt() async throws {
        let transport = InMemoryTransport()
        let database = try Clients.make(url: "http://fake.invalid:1?ns=wait")
        database.transport = transport
        defer { database.shutdown() }
        database.reference(withPath: "a").write(1)
        var side = try await transport.accept()
        side.sendHandshake()
        #expect(try await Self.nextPut(side).path == "/a")

        let waited = Recorder()
        database.waitForPendingWrites { error in waited.record(error.map { "\($0)" } ?? "done") }
        database.reference(withPath: "b").write(2)
        #expect(try await Self.nextPut(side).path == "/b")
        await database.settle()
        #expect(waited.all.isEmpty)

        // The connection drops before the server answers: both writes go again, the wait goes on.
        side.drop()
        side = try await transport.accept()
        side.sendHandshake()
        let resentA = try await Self.nextPut(side)
        let resentB = try await Self.nextPut(side)
        #expect(resentA.path == "/a" && resentB.path == "/b")
        await database.settle()
        #expect(waited.all.isEmpty, "a reconnection does not end the wait")

        side.sendReply(resentA.number)
        #expect(try await waited.waitFor("done"))
        #expect(database.pendingWriteCount == 1, "b, made after the call, is still pending")
        side.sendReply(resentB.number)
        #expect(try await waitUntil { database.pendingWriteCount == 0 })
    }

    @Test func shutdownEndsTheWaitWithAnErrorAndCancellationStopsIt() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=wait-end")
        database.goOffline()
        database.reference(withPath: "a").write(1)

        let cancelled = Task { try await database.waitForPendingWrites() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        await database.settle()
        let repo = database.repo
        #expect(repo.perform { repo.writeWaiters.isEmpty }, "a cancelled wait is forgotten")

        let waited = Recorder()
        database.waitForPendingWrites { error in waited.record((error as? DatabaseError)?.code.rawValue ?? "done") }
        database.shutdown()
        #expect(try await waited.waitFor("disconnected"))
        let late = await #expect(throws: DatabaseError.self) { try await database.waitForPendingWrites() }
        #expect(late?.code == .disconnected)
    }

    /// The next `p` (put) request the client sent: its request number and path.
    private static func nextPut(_ side: InMemoryServerSide) async throws -> (number: Int, path: String) {
        while let message = try await side.receiveMessage(timeout: .seconds(30)) {
            guard let object = try JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
                  let data = object["d"] as? [String: Any], data["a"] as? String == "p",
                  let number = data["r"] as? Int, let body = data["b"] as? [String: Any], let path = body["p"] as? String
            else { continue }
            return (number, path)
        }
        throw SupportFailure("the connection closed before a put came")
    }
}

/// `updateChildValues` from synchronous code: queued and applied locally at once (inside an
/// `async` function a bare call is the form that waits for the server).
private func updateLocally(_ ref: DatabaseReference, _ values: [String: Any]) { ref.updateChildValues(values) }
