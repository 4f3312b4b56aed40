import Foundation
import PostgresServerStore
import RealtimeDatabase
import Synchronization
import Testing
import TestSupport

extension PostgresTests {
/// Several rtdb-server processes on one PostgreSQL database serve the same namespace.
@Suite("Several nodes on PostgreSQL", .serialized)
struct SharedNamespaceTests {
    /// Starts `count` rtdb-server nodes on the test database.
    static func nodes(_ count: Int, extra: [String] = []) async throws -> [ServerProcess] {
        let url = try TestPostgres.url()
        var started: [ServerProcess] = []
        for _ in 0..<count {
            started.append(try await ServerProcess.launch(backend: "postgres", arguments: ["--postgres-url", url] + extra))
        }
        return started
    }

    /// Runs `body` with `count` nodes and stops them all before returning (also when it throws):
    /// a server process still running when the test process exits can keep it from exiting.
    static func withNodes(_ count: Int, _ body: ([ServerProcess]) async throws -> Void) async throws {
        let servers = try await nodes(count)
        do {
            try await body(servers)
        } catch {
            for server in servers { await server.shutDown() }
            throw error
        }
        for server in servers { await server.shutDown() }
    }

    @Test("a listener on node B sees a write made on node A, and B's reads and ETag writes see it")
    func listenerOnAnotherNode() async throws {
        try await Self.withNodes(2) { servers in
            let namespace = TestPostgres.freshNamespace("x")
            let database = try Database(url: servers[1].databaseURL(namespace: namespace))
            defer { database.shutdown() }
            let seen = Mutex<[String]>([])
            database.reference(withPath: "room/message").observe(.value) { snapshot in
                seen.withLock { $0.append("\(snapshot.value ?? "nil")") }
            }
            #expect(try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0.count == 1 } }, "the first event (the empty location)")

            try await servers[0].write("room/message", json: #""hello from A""#, namespace: namespace)
            #expect(try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0.last == "hello from A" } }, "B's listener got A's write: \(seen.withLock { $0 })")
            #expect(try await servers[1].read("room/message", namespace: namespace) as? String == "hello from A")

            // A conditional write on B decided against what A committed: the stale ETag loses.
            let stale = try await restRequest("PUT", servers[1].restURL("room/message", namespace: namespace), body: #""late""#,
                                              headers: ["if-match": "not-the-etag", "X-Firebase-ETag": "true"])
            #expect(stale.status == 412, "a stale ETag is refused: \(stale.status) \(stale.body)")
        }
    }

    @Test("3 nodes x 5 clients x 10 transactions on one counter end at exactly 150")
    func transactionsAcrossNodes() async throws {
        try await Self.withNodes(3) { servers in
            let namespace = TestPostgres.freshNamespace("t")
            let databases = try (0..<15).map { try Database(url: servers[$0 % 3].databaseURL(namespace: namespace)) }
            defer { for database in databases { database.shutdown() } }
            let rerun = try await withThrowingTaskGroup(of: Int.self) { group in
                for database in databases {
                    group.addTask {
                        var rerun = 0
                        let counter = database.reference(withPath: "counter")
                        var committed = 0
                        while committed < 10 {
                            do {
                                let (done, _) = try await counter.runTransactionBlock { data in
                                    data.value = ((data.value as? Int) ?? 0) + 1
                                    return .success(withValue: data)
                                }
                                if done { committed += 1 }
                            } catch {
                                // Too much contention (the client's retry limit): run it again.
                                rerun += 1
                            }
                        }
                        return rerun
                    }
                }
                return try await group.reduce(0, +)
            }
            // A node applies the others' commits when their notification (or its once-a-second
            // check) wakes it: reads on every node reach the count, and never pass it.
            for server in servers {
                var seen: Int?
                let converged = try await waitUntil(timeout: .seconds(20)) {
                    seen = try await server.read("counter", namespace: namespace) as? Int
                    return seen ?? 0 >= 150
                }
                #expect(converged && seen == 150, "every node reaches the same count (read \(seen.map(String.init) ?? "nothing"))")
            }
            print("transactions across 3 nodes: 150 committed, \(rerun) re-run after the client's retry limit")
        }
    }

    @Test("a node killed with SIGKILL loses no acknowledged write; the other node serves them all")
    func killedNodeLosesNothing() async throws {
        try await Self.withNodes(2) { servers in
            let namespace = TestPostgres.freshNamespace("k")
            let acknowledged = Mutex<[Int]>([])
            let writer = Task {
                for index in 0..<100_000 {
                    let reply = try await restRequest("PUT", servers[0].restURL("w/\(index)", namespace: namespace), body: "\(index)")
                    guard reply.status == 200 else { return }
                    acknowledged.withLock { $0.append(index) }
                }
            }
            #expect(try await waitUntil(timeout: .seconds(20)) { acknowledged.withLock { $0.count } >= 50 })
            await servers[0].stop(hard: true)
            _ = await writer.result
            let written = acknowledged.withLock { $0 }
            let stored = try await servers[1].read("w", namespace: namespace)
            let values = Self.values(stored)
            let missing = written.filter { values[$0] != $0 }
            #expect(missing.isEmpty, "\(missing.count) of \(written.count) acknowledged writes are missing on the other node")
        }
    }

    @Test("PostgreSQL restarting during writes: writes fail fast meanwhile, reads go on, no acknowledged write is lost")
    func postgresRestart() async throws {
        let control = try TestPostgres.control()
        try await Self.withNodes(1) { servers in
            let namespace = TestPostgres.freshNamespace("r")
            try await servers[0].write("kept", json: "1", namespace: namespace)
            let acknowledged = Mutex<[Int]>([])
            let failures = Mutex<[Int]>([])
            let ackedBeforeRestart = Mutex<Int?>(nil)
            let writer = Task {
                for index in 0..<2_000 {
                    let started = ContinuousClock.now
                    let reply = try? await restRequest("PUT", servers[0].restURL("w/\(index)", namespace: namespace), body: "\(index)")
                    if reply?.status == 200 {
                        acknowledged.withLock { $0.append(index) }
                    } else {
                        failures.withLock { $0.append(Int((ContinuousClock.now - started).components.seconds)) }
                    }
                    // Done once 50 writes were acknowledged after PostgreSQL came back.
                    if let before = ackedBeforeRestart.withLock({ $0 }), acknowledged.withLock({ $0.count }) >= before + 50 { return }
                }
            }
            #expect(try await waitUntil(timeout: .seconds(20)) { acknowledged.withLock { $0.count } >= 20 })
            try await Self.run(control, "stop")
            // Reads are served from memory while PostgreSQL is down.
            #expect(try await servers[0].read("kept", namespace: namespace) as? Int == 1)
            #expect(try await waitUntil(timeout: .seconds(30)) { !failures.withLock { $0.isEmpty } }, "a write failed while PostgreSQL was down")
            ackedBeforeRestart.withLock { $0 = acknowledged.withLock { $0.count } }
            try await Self.run(control, "start")
            _ = await writer.result
            let slowest = failures.withLock { $0.max() ?? 0 }
            #expect(slowest <= 11, "a failing write answered within the store's bound (slowest \(slowest) s)")
            #expect(acknowledged.withLock { $0.count } >= (ackedBeforeRestart.withLock { $0 } ?? 0) + 50, "writes succeed again after the restart")
            let values = Self.values(try await servers[0].read("w", namespace: namespace))
            let written = acknowledged.withLock { $0 }
            let allThere = written.allSatisfy { (key: Int) -> Bool in values[key] == key }
            #expect(allThere, "every acknowledged write is there")
            // And a fresh node loads them all from PostgreSQL.
            try await Self.withNodes(1) { fresh in
                let reloaded = Self.values(try await fresh[0].read("w", namespace: namespace))
                let allLoaded = written.allSatisfy { (key: Int) -> Bool in reloaded[key] == key }
                #expect(allLoaded, "a new node loads every acknowledged write")
            }
        }
    }

    @Test("the onDisconnect writes of a node killed with SIGKILL run once, on another node, within 10 s")
    func onDisconnectOfADeadNode() async throws {
        try await Self.withNodes(2) { servers in
            let namespace = TestPostgres.freshNamespace("o")
            let database = try Database(url: servers[0].databaseURL(namespace: namespace))
            defer { database.shutdown() }
            let presence = database.reference(withPath: "presence/ada")
            try await presence.onDisconnectSetValue("offline")
            try await database.reference(withPath: "leaves").onDisconnectSetValue(ServerValue.increment(1))
            try await presence.setValue("online")
            #expect(try await servers[1].read("presence/ada", namespace: namespace) as? String == "online")

            await servers[0].stop(hard: true)
            let killed = ContinuousClock.now
            let ran = try await waitUntil(timeout: .seconds(20)) {
                try await servers[1].read("presence/ada", namespace: namespace) as? String == "offline"
            }
            let elapsed = ContinuousClock.now - killed
            #expect(ran, "the dead node's onDisconnect write ran on the other node")
            #expect(elapsed < .seconds(10), "it ran within 10 s of the kill (took \(elapsed))")
            print("onDisconnect of a SIGKILLed node ran on another node after \(elapsed)")
            // Once: the increment is not applied again by a later sweep (two more have finished).
            try await servers[1].waitForOrphanSweeps(2)
            #expect(try await servers[1].read("leaves", namespace: namespace) as? Int == 1)
        }
    }

    @Test("a connection that ends on a live node runs its onDisconnect writes there, once")
    func onDisconnectOfALiveNode() async throws {
        try await Self.withNodes(2) { servers in
            let namespace = TestPostgres.freshNamespace("l")
            let database = try Database(url: servers[0].databaseURL(namespace: namespace))
            try await database.reference(withPath: "leaves").onDisconnectSetValue(ServerValue.increment(1))
            database.shutdown()
            #expect(try await waitUntil(timeout: .seconds(10)) {
                try await servers[1].read("leaves", namespace: namespace) as? Int == 1
            })
            // Its node lives on and took the writes back from the shared table as it ran them, so no
            // other node can claim them: none is left, and two later sweeps of node B ran nothing.
            #expect(try await Self.heldOnDisconnectRows(namespace: namespace) == 0)
            try await servers[1].waitForOrphanSweeps(2)
            #expect(try await servers[1].read("leaves", namespace: namespace) as? Int == 1)
        }
    }

    /// `{"0": 0, "1": 1}` or `[0, 1]` as index → value.
    static func values(_ json: Any?) -> [Int: Int] {
        var result: [Int: Int] = [:]
        if let array = json as? [Any] {
            for (index, value) in array.enumerated() { if let value = value as? Int { result[index] = value } }
        } else if let object = json as? [String: Any] {
            for (key, value) in object { if let index = Int(key), let value = value as? Int { result[index] = value } }
        }
        return result
    }

    /// How many connections' onDisconnect writes the shared table holds for `namespace` (psql).
    static func heldOnDisconnectRows(namespace: String) async throws -> Int {
        let output = try await runCommandOutput(
            "psql", [try TestPostgres.url(), "-tAc", "SELECT count(*) FROM rtdb_ondisconnect WHERE namespace = '\(namespace)'"])
        guard let count = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SupportFailure("psql printed \(output)")
        }
        return count
    }

    /// Runs the cluster's control script, without blocking a thread.
    static func run(_ control: String, _ verb: String) async throws {
        let status = try await runCommand(control, [verb])
        guard status == 0 else { throw SupportFailure("\(control) \(verb) exited with \(status)") }
    }
}
}
