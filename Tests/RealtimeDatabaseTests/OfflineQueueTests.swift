import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// Writes made offline are queued and sent in order on reconnect; with persistence on, the queue
/// survives a client restart and a SIGKILL of the client process, on every backend.
@Suite("Offline write queue")
struct OfflineQueueTests {
    /// Writes `count` items and a `last` marker after each, offline.
    private func writeSequence(_ database: Database, count: Int) {
        let ref = database.reference(withPath: "queue")
        for index in 0..<count {
            ref.child("items/\(index)").setValue(index)
            ref.child("last").setValue(index)
        }
    }

    /// Waits until the server holds the whole sequence; checks every item is there.
    private func expectSequence(on server: ServerProcess, namespace: String, count: Int) async throws {
        let arrived = try await waitUntil(timeout: .seconds(20)) {
            try await server.read("queue/last", namespace: namespace) as? Int == count - 1
        }
        #expect(arrived, "the server never got the last write")
        let items = try await server.read("queue/items", namespace: namespace) as? [Any] ?? []
        #expect(items.count == count)
        for (index, item) in items.enumerated() { #expect(item as? Int == index) }
    }

    @Test func offlineWritesAreSentInOrderOnReconnect() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("order")
        // A second client watches the marker: it must only ever move forward.
        let watcher = try Clients.make(server, namespace: namespace)
        defer { watcher.shutdown() }
        let markers = Recorder()
        watcher.reference(withPath: "queue/last").observe(.value) { markers.record("\($0.value as? Int ?? -1)") }

        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        database.goOffline()
        writeSequence(database, count: 50)
        // The barrier: the connection has handled all 50 writes (held, as it is offline).
        await database.settle()
        #expect(try await server.read("queue", namespace: namespace) == nil, "nothing may reach the server while offline")

        database.goOnline()
        try await expectSequence(on: server, namespace: namespace, count: 50)
        #expect(try await markers.waitFor("49"))
        let seen = markers.all.compactMap { Int($0) }
        #expect(seen == seen.sorted(), "the marker went backwards: \(seen)")
    }

    @Test("The queue survives a client restart", arguments: ["sqlite", "lmdb", "leveldb"])
    func queueSurvivesRestart(backend: String) async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("restart")
        let directory = Clients.temporaryDirectory("queue-\(backend)")
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let first = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        first.goOffline()
        writeSequence(first, count: 100)
        first.shutdown()
        #expect(try await server.read("queue", namespace: namespace) == nil)

        let second = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        defer { second.shutdown() }
        // The restored writes show locally before the server has them.
        let local = Recorder()
        second.reference(withPath: "queue/last").observe(.value) { local.record("\($0.value ?? "nil")") }
        #expect(try await local.waitFor("99"))
        try await expectSequence(on: server, namespace: namespace, count: 100)
    }

    @Test("The queue survives a SIGKILL of the client process", arguments: ["sqlite", "lmdb", "leveldb"])
    func queueSurvivesKill(backend: String) async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("kill")
        let directory = Clients.temporaryDirectory("kill-\(backend)")
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let probe = try ChildProcess(
            executable: try builtExecutable(named: "rtdb-client-probe"),
            arguments: ["write-offline", "--url", server.databaseURL(namespace: namespace), "--backend", backend,
                        "--directory", directory, "--count", "100000"])
        try await probe.waitForOutput("wrote 300")
        await probe.stop(signal: SIGKILL)
        // Every write the probe reported was durable before it said so.
        let reported = probe.output.split(separator: "\n").compactMap { line in
            line.hasPrefix("wrote ") ? Int(line.dropFirst(6)) : nil
        }.max() ?? -1
        #expect(reported >= 300)
        #expect(try await server.read("queue", namespace: namespace) == nil)

        // A new client on the same directory (its first reference starts it) resends the queue.
        let client = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        defer { client.shutdown() }
        _ = client.reference()
        var last = -1
        // Settled: the server acknowledged every queued write, so the marker no longer moves.
        // The count is read off the cooperative pool: the synchronous API waits for the client's
        // queue, busy draining thousands of acknowledgements, and blocked a pool thread meanwhile
        // (one of two: every other test in the process slowed to a crawl and timed out).
        let arrived = try await waitUntil(timeout: .seconds(30)) {
            guard try await offThePool({ client.pendingWriteCount }) == 0 else { return false }
            last = try await server.read("queue/last", namespace: namespace) as? Int ?? -1
            return last >= reported
        }
        #expect(arrived, "the server got up to \(last), the probe had reported \(reported)")
        let items = try await server.read("queue/items", namespace: namespace) as? [Any] ?? []
        #expect(items.count >= last + 1)
        for index in 0...max(0, last) { #expect(items.count > index && items[index] as? Int == index) }
    }
}
