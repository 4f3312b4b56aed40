import Foundation
@testable import RealtimeDatabase
import Synchronization
import TestSupport
import Testing

/// Beyond Firebase: a named transaction is kept in the write queue, runs again after a restart
/// once its handler is registered, and is applied exactly once.
@Suite("named transactions survive a restart")
struct NamedTransactionTests {
    private static func probe(_ server: ServerProcess, namespace: String, directory: String, _ extra: [String]) throws -> ChildProcess {
        try ChildProcess(
            executable: try builtExecutable(named: "rtdb-client-probe"),
            arguments: ["transaction", "--url", server.databaseURL(namespace: namespace), "--backend", "sqlite", "--directory", directory] + extra)
    }

    /// Each run starts `add(1)` and is killed with SIGKILL when the server's acknowledgement of
    /// its commit arrives; the next run restores it, runs it again and the server answers the
    /// repeat without applying it.
    @Test func aTransactionCommittedJustBeforeTheClientIsKilledIsAppliedOnce() async throws {
        let server = try await ServerProcess.launch(backend: "sqlite")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("named-tx")
        let directory = Clients.temporaryDirectory("named-tx")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runs = 5
        for run in 1...runs {
            // From the second run on, the restored transaction's commit is acknowledged first.
            let child = try Self.probe(server, namespace: namespace, directory: directory, ["--kill-at-ack", run == 1 ? "1" : "2"])
            try await child.waitForOutput("killing at ack", timeout: .seconds(30))
            await child.stop(signal: SIGKILL)
            #expect(!child.output.contains("new "), "run \(run) finished instead of being killed")
        }
        let last = try Self.probe(server, namespace: namespace, directory: directory, ["--restored-only"])
        try await last.waitForOutput("done", timeout: .seconds(30))
        await last.stop()
        #expect(last.output.contains("restored ok committed=true"), "the last run's output: \(last.output)")
        let tally = try await server.read("tally", namespace: namespace) as? Int
        #expect(tally == runs, "\(runs) transactions added 1 each; the tally says \(String(describing: tally))")
    }

    /// Queued offline and killed: the next run on the directory does not run it until its
    /// handler is registered, then commits it once and tells the registration's completion.
    @Test func aTransactionQueuedOfflineWaitsForItsHandlerAfterARestart() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("named-offline")
        let directory = Clients.temporaryDirectory("named-offline")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("tally", json: "10", namespace: namespace)
        let child = try Self.probe(server, namespace: namespace, directory: directory, ["--offline"])
        try await child.waitForOutput("queued", timeout: .seconds(30))
        await child.stop(signal: SIGKILL)

        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        defer { database.shutdown() }
        // Online and answered: had the transaction run, its commit would be in by now.
        _ = try await database.reference(withPath: "barrier").singleEvent(of: .value)
        _ = try await database.reference(withPath: "barrier").singleEvent(of: .value)
        #expect(try await server.read("tally", namespace: namespace) as? Int == 10, "it ran without its handler")

        let outcome = Mutex<String?>(nil)
        database.registerTransaction(named: "add", { data, arguments in
            let current = (data.value as? Int) ?? 0
            data.value = current + ((arguments as? Int) ?? 0)
            return .success(withValue: data)
        }, completion: { error, committed, snapshot in
            outcome.withLock { $0 = "\(error.map { "\($0)" } ?? "ok") \(committed) \(snapshot?.value ?? "nil")" }
        })
        #expect(try await waitUntil(timeout: .seconds(20)) { outcome.withLock { $0 } != nil }, "the restored transaction never finished")
        #expect(outcome.withLock { $0 } == "ok true 11")
        #expect(try await server.read("tally", namespace: namespace) as? Int == 11)
        #expect(database.pendingWriteCount == 0)
    }

    @Test func theAsyncFormReturnsTheCommittedDataAndAnUnknownNameIsAClearError() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("named-async")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        database.registerTransaction(named: "append") { data, arguments in
            var list = (data.value as? [Any]) ?? []
            list.append(arguments ?? NSNull())
            data.value = list
            return .success(withValue: data)
        }
        let ref = database.reference(withPath: "log")
        let (committed, snapshot) = try await ref.runTransaction(named: "append", arguments: ["step": 1])
        #expect(committed)
        #expect(snapshot.json == #"[{"step":1}]"#)
        #expect(try await server.read("log/0/step", namespace: namespace) as? Int == 1)
        await #expect(throws: DatabaseError.self) { _ = try await ref.runTransaction(named: "missing") }
        do {
            _ = try await ref.runTransaction(named: "append", arguments: Date())
            Issue.record("a Date is not valid data")
        } catch let error as DatabaseError {
            #expect(error.code == .invalidArgument)
        }
    }
}
