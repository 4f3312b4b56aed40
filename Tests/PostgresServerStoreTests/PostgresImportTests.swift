import CoreTree
import Foundation
import Logging
import PostgresServerStore
import RealtimeDatabase
import Synchronization
import Testing
import TestSupport

extension PostgresTests {
/// `rtdb-server import --postgres-url` replaces a namespace that nodes are serving, in one
/// transaction: the nodes go on serving, see the new data once it commits, and an import killed
/// with SIGKILL at any moment leaves the old data.
@Suite("Import into PostgreSQL", .serialized)
struct PostgresImportTests {
    /// A chat document written by gen-chat-data, and its tree.
    static func document(megabytes: Int, seed: Int) async throws -> (file: String, tree: Node) {
        let file = NSTemporaryDirectory() + "rtdb-pg-import-\(seed)-\(UUID().uuidString).json"
        let generator = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "exec \"$0\" --megabytes \(megabytes) --seed \(seed) > \"$1\"", try builtExecutable(named: "gen-chat-data").path, file])
        #expect(await generator.waitForExit() == 0)
        return (file, try Node(json: Array(try Data(contentsOf: URL(fileURLWithPath: file)))))
    }

    static func importer(_ file: String, namespace: String) throws -> ChildProcess {
        try ChildProcess(executable: try builtExecutable(named: "rtdb-server"),
                         arguments: ["import", "--namespace", namespace, "--postgres-url", try TestPostgres.url(), file], collectErrors: true)
    }

    /// The namespace's data as committed in PostgreSQL (the provider's export reads its rows). A
    /// node follows another process's commit through the change log soon after it, not at once
    /// (its wake-up can lag on a busy machine), so what was committed is read here.
    static func committed(_ namespace: String) async throws -> Node {
        let provider = try PostgresStoreProvider(url: try TestPostgres.url(), logger: Logger(label: "test.postgres"))
        var document: [UInt8] = []
        do {
            try await provider.exportNamespace(namespace) { document += $0 }
        } catch {
            await provider.shutdown()
            throw error
        }
        await provider.shutdown()
        return try Node(json: document)
    }

    /// The namespace's whole data as a node serves it.
    static func served(_ server: ServerProcess, namespace: String) async throws -> Node {
        let reply: RESTReply
        do {
            reply = try await restRequest("GET", server.restURL("", namespace: namespace) + "&format=export")
        } catch {
            // Say which node did not answer (under a sanitizer one took over 20 s, twice).
            throw SupportFailure("GET / of \(namespace) from the node on port \(server.port) failed: \(error)")
        }
        guard reply.status == 200 else { throw SupportFailure("GET / gave \(reply.status): \(reply.body)") }
        return try Node(jsonString: reply.body)
    }

    @Test("an import replaces a served namespace: both nodes and a listener see the new data, rules stay, a killed import leaves the old data")
    func importWhileServing() async throws {
        let namespace = TestPostgres.freshNamespace("import")
        let first = try await Self.document(megabytes: 1, seed: 1)
        let second = try await Self.document(megabytes: 1, seed: 2)
        defer { for file in [first.file, second.file] { try? FileManager.default.removeItem(atPath: file) } }
        try await SharedNamespaceTests.withNodes(2) { servers in
            try await servers[0].write("old/data", json: #""before the import""#, namespace: namespace)
            let rules = #"{"rules":{".read":true,"open":{".write":true}}}"#
            let installed = try await restRequest("PUT", "http://127.0.0.1:\(servers[0].port)/.settings/rules.json?ns=\(namespace)", body: rules,
                                                  headers: ["Authorization": "Bearer owner"])
            #expect(installed.status == 200, "\(installed.body)")
            // Node B holds a location of the old data in memory through a listener.
            let database = try Database(url: servers[1].databaseURL(namespace: namespace))
            defer { database.shutdown() }
            let seen = Mutex<[String]>([])
            database.reference(withPath: "old/data").observe(.value) { snapshot in
                seen.withLock { $0.append("\(snapshot.value ?? "nil")") }
            }
            #expect(try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0.last == "before the import" } })

            let importer = try Self.importer(first.file, namespace: namespace)
            try await importer.waitForOutput("imported ", timeout: .seconds(120))
            // It ends by itself once it printed its report; a SIGTERM sent while it closes its
            // connections would end it with the signal (seen under ThreadSanitizer, whose exit is slow).
            let importStatus = await importer.waitForExit()
            #expect(importStatus == 0, "the import exited with \(importStatus) after its report; its output: \(importer.output)")
            // Committed; each node serves it once it has followed the commit (soon, not at once:
            // a node reading just then could still answer from its cache, seen once on a busy machine).
            #expect(try await Self.committed(namespace) == first.tree)
            #expect(try await waitUntil(timeout: .seconds(10)) { try await Self.served(servers[0], namespace: namespace) == first.tree },
                    "node A serves the import")
            #expect(try await waitUntil(timeout: .seconds(10)) { try await Self.served(servers[1], namespace: namespace) == first.tree },
                    "node B serves the import")
            // The listener on node B was told that `old` is gone.
            #expect(try await waitUntil(timeout: .seconds(10)) { seen.withLock { $0.count > 1 && $0.last == "<null>" } }, "\(seen.withLock { $0 })")
            // The rules were kept: only `open` may be written.
            #expect(try await restRequest("PUT", servers[1].restURL("elsewhere", namespace: namespace), body: "1").status == 401)
            #expect(try await restRequest("PUT", servers[1].restURL("open", namespace: namespace), body: "1").status == 200)

            // Imports of the second document killed at several moments: the first stays, whole.
            let started = ContinuousClock.now
            let timing = try Self.importer(second.file, namespace: namespace)
            try await timing.waitForOutput("imported ", timeout: .seconds(120))
            await timing.stop()
            let duration = ContinuousClock.now - started
            #expect(try await Self.committed(namespace) == second.tree)
            #expect(try await waitUntil(timeout: .seconds(10)) { try await Self.served(servers[0], namespace: namespace) == second.tree },
                    "node A serves the second import")
            var current = second.tree
            for (round, fraction) in [0.2, 0.5, 0.8].enumerated() {
                let next = round % 2 == 0 ? first : second
                let killed = try Self.importer(next.file, namespace: namespace)
                try await Task.sleep(for: duration * fraction)
                await killed.stop(signal: SIGKILL)
                // The import committed before the kill, or left nothing: the whole new data or the whole old.
                let data = try await Self.committed(namespace)
                #expect(data == current || data == next.tree, "round \(round) (killed at \(fraction)): neither the old data nor the new")
                if data == next.tree { current = next.tree }
                let settled = current
                for (index, server) in servers.enumerated() {
                    #expect(try await waitUntil(timeout: .seconds(10)) { try await Self.served(server, namespace: namespace) == settled },
                            "round \(round): node \(index) serves what was committed")
                }
            }
        }
    }

    @Test("a malformed document, or data that cannot be stored, is refused naming its byte; nothing changes")
    func refusedDocuments() async throws {
        let namespace = TestPostgres.freshNamespace("import-bad")
        try await SharedNamespaceTests.withNodes(1) { servers in
            try await servers[0].write("kept", json: "1", namespace: namespace)
            for (text, words) in [(#"{"a": {"b": 1}, "c": [1, 2"#, "Malformed JSON"), (#"{"a": {"b.c": 1}}"#, "Invalid key")] {
                let file = NSTemporaryDirectory() + "rtdb-pg-bad-\(UUID().uuidString).json"
                defer { try? FileManager.default.removeItem(atPath: file) }
                try Data(text.utf8).write(to: URL(fileURLWithPath: file))
                let importer = try Self.importer(file, namespace: namespace)
                let status = await importer.waitForExit()
                #expect(status != 0)
                #expect(importer.output.contains(words) && importer.output.contains("byte"), "\(importer.output)")
                #expect(try await Self.served(servers[0], namespace: namespace) == (try Node(jsonString: #"{"kept": 1}"#)))
            }
        }
    }

    @Test("text COPY must escape (backslashes, escaped quotes and newlines, tabs) and characters of several bytes arrive unchanged")
    func awkwardText() async throws {
        let namespace = TestPostgres.freshNamespace("import-text")
        let document = #"""
            {"back\\slash": {"v": "a\\b\\\\c", ".priority": "p\\q"}, "lines": "one\ntwo\r\tthree \"quoted\"",
             "ünï€😀": {"k": "日本語 \\t not a tab", "n": -1.5e-7}, "plain": true}
            """#
        let file = NSTemporaryDirectory() + "rtdb-pg-text-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(document.utf8).write(to: URL(fileURLWithPath: file))
        try await SharedNamespaceTests.withNodes(1) { servers in
            let importer = try Self.importer(file, namespace: namespace)
            #expect(await importer.waitForExit() == 0, "\(importer.output)")
            #expect(try await Self.served(servers[0], namespace: namespace) == (try Node(jsonString: document)))
        }
    }
}
}
