import CoreTree
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import ServerCore
import Testing
import TestSupport

/// Import and export on every disk backend: a tree written as export JSON, imported, read back
/// by the server's store and exported again is the same tree, priorities, long paths and all.
@Suite("Namespace import and export")
struct NamespaceTransferTests {
    static let backends: [StorageBackend] = [.sqlite, .lmdb, .leveldb]

    /// A tree with what the row layout must get right: priorities on leaves, objects and the
    /// root, arrays, keys that need escapes, numbers of every kind, and paths too long for
    /// their own rows (kept in overflow rows), priorities among them.
    static func tree(seed: UInt64) -> Node {
        var random = SplitMix64(seed: seed)
        var root = Node.empty
        func put(_ keys: [String], _ node: Node) { root = root.updatingChild(at: TreePath(keys: keys.map { ChildKey($0) }), to: node) }
        for room in 0..<25 {
            let roomKey = "room-\(room)"
            for message in 0..<(5 + Int(random.next() % 30)) {
                let key = "-Nm\(String(random.next() % 1_000_000, radix: 36))\(message)"
                put(["rooms", roomKey, key, "text"], Node(.string(String(repeating: "hé \"ok\" ", count: Int(random.next() % 20)))))
                put(["rooms", roomKey, key, "ts"], Node(.number(Double(1_700_000_000_000 + Int(random.next() % 1_000_000)))))
                put(["rooms", roomKey, key, "likes"], Node(.number(Double(random.next() % 7)), priority: random.next() % 3 == 0 ? .number(-1.5) : nil))
                if random.next() % 5 == 0 { put(["rooms", roomKey, key, ".priority"], Node(.string("p\(message)"))) }
            }
            if room % 4 == 0 { put(["rooms", roomKey, ".priority"], Node(.number(Double(room)))) }
        }
        put(["list"], Node(children: (0..<12).map { (key: ChildKey(String($0)), value: Node(.number(Double($0) * 0.5))) }))
        for key in ["日本語", "emoji😀", "a\"quote", "back\\slash", "~!@%^&*()_+=-`{}|;'<>,?", " space", "0", "-12", "2147483648"] {
            put(["keys", key], Node(.bool(key.count % 2 == 0)))
        }
        put(["numbers"], Node(children: [
            (key: ChildKey("big"), value: Node(.number(9_007_199_254_740_994))), (key: ChildKey("tiny"), value: Node(.number(.leastNonzeroMagnitude))),
            (key: ChildKey("neg"), value: Node(.number(-0.1))), (key: ChildKey("huge"), value: Node(.number(1.7976931348623157e308))),
        ]))
        // Four 110-byte keys: past the 480 bytes a row's key may have.
        let long = (0..<4).map { String(repeating: Character(UnicodeScalar(UInt8(97 + $0))), count: 110) }
        put(["deep"] + long + ["leaf"], Node(.string("far"), priority: .string("deep")))
        put(["deep"] + long + ["other"], Node(.number(2)))
        put(["deep"] + long + [".priority"], Node(.number(3)))
        put(["deep"] + Array(long.prefix(3)) + ["x" + long[3]], Node(.bool(true)))
        put(["deep", "short"], Node(.string("near")))
        put([".priority"], Node(.string("root")))
        return root
    }

    static func temporary(_ name: String) -> String { NSTemporaryDirectory() + "rtdb-transfer-\(name)-\(UUID().uuidString)" }

    /// Imports `json` into `namespace` of `dataDirectory`.
    @discardableResult
    static func importJSON(_ json: [UInt8], namespace: String = "chat", into dataDirectory: String, backend: StorageBackend,
                           subtreeBytes: Int = JSONStreamReader.defaultSubtreeBytes) async throws -> NamespaceImport.Report {
        let file = temporary("input") + ".json"
        try Data(json).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        var options = NamespaceImport.Options(namespace: namespace, dataDirectory: dataDirectory, backend: backend)
        options.subtreeBytes = subtreeBytes
        options.batchBytes = 64 << 10
        return try await offThePool { [options] in try NamespaceImport.run(file: file, options: options) }
    }

    /// The tree the server's store loads for `namespace`.
    static func load(_ namespace: String = "chat", in dataDirectory: String, backend: StorageBackend) async throws -> Node {
        let store = try await EmbeddedServerStore.open(backend, directory: dataDirectory + "/" + namespace)
        let tree = try await store.load()
        try await store.close()
        return tree
    }

    /// The export of `namespace`, as bytes.
    static func export(_ namespace: String = "chat", from dataDirectory: String, backend: StorageBackend) async throws -> [UInt8] {
        let file = temporary("export") + ".json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await offThePool { _ = try NamespaceExport.run(namespace: namespace, dataDirectory: dataDirectory, backend: backend, to: file) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    @Test("import, load and export give back the tree, priorities and long paths included", arguments: backends.map(\.name))
    func roundTrip(backendName: String) async throws {
        let backend = try StorageBackends(Self.backends).backend(named: backendName)
        let tree = Self.tree(seed: 42)
        for subtreeBytes in [48, JSONStreamReader.defaultSubtreeBytes] {
            let directory = Self.temporary(backendName)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let report = try await Self.importJSON(tree.jsonBytes(format: .export), into: directory, backend: backend, subtreeBytes: subtreeBytes)
            #expect(report.bytes == tree.jsonBytes(format: .export).count)
            #expect(try await Self.load(in: directory, backend: backend) == tree, "subtree \(subtreeBytes)")
            let exported = try await Self.export(from: directory, backend: backend)
            #expect(try Node(json: exported) == tree, "subtree \(subtreeBytes)")
            // Nothing left beside the namespace.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [".rtdb-server.lock", "chat"])
            // An export imported again exports the same bytes.
            try await Self.importJSON(exported, namespace: "again", into: directory, backend: backend, subtreeBytes: subtreeBytes)
            #expect(try await Self.export("again", from: directory, backend: backend) == exported)
        }
    }

    @Test("an import replaces the namespace's data and keeps its rules", arguments: backends.map(\.name))
    func replaces(backendName: String) async throws {
        let backend = try StorageBackends(Self.backends).backend(named: backendName)
        let directory = Self.temporary(backendName)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await EmbeddedServerStore.open(backend, directory: directory + "/chat")
        let old = try Node(jsonString: #"{"old": {"a": 1, "b": 2}, "rooms": {"gone": true}}"#)
        try await store.commit(StoreChange(root: old, changedPaths: [.root]))
        try await store.saveSetting(named: "rules", Array(#"{"rules": {".read": true}}"#.utf8))
        try await store.close()

        let new = try Node(jsonString: #"{"rooms": {"r1": {"m": "hi"}}, "n": {".sv": "timestamp"}}"#)
        let report = try await Self.importJSON(new.jsonBytes(format: .export), into: directory, backend: backend, subtreeBytes: 8)
        #expect(report.settingsKept == 1)
        let loaded = try await Self.load(in: directory, backend: backend)
        #expect(loaded.child(at: "rooms") == new.child(at: "rooms"))
        #expect(loaded.child(at: "old").isEmpty)
        // The server value is resolved, as a write would resolve it.
        guard case .number(let stamp)? = loaded.child(at: "n").leafValue else {
            Issue.record("n is \(loaded.child(at: "n"))")
            return
        }
        #expect(abs(stamp - Date().timeIntervalSince1970 * 1000) < 600_000)
        let reopened = try await EmbeddedServerStore.open(backend, directory: directory + "/chat")
        #expect(try await reopened.setting(named: "rules") == Array(#"{"rules": {".read": true}}"#.utf8))
        try await reopened.close()
    }

    @Test("repeated member names and emptied objects are imported as the whole parser reads them", arguments: backends.map(\.name))
    func repeatedNames(backendName: String) async throws {
        let backend = try StorageBackends(Self.backends).backend(named: backendName)
        let text = #"""
            {"a": {"x": 1, "y": {"z": 2}}, "b": 1, "a": {"w": 3, ".priority": 1}, "b": null,
             "p": {"k": 1, "k": null, ".priority": 7}, "c": {"k": {"deep": 1}}, "c": {"k": 5},
             "d": {"e": {"f": 1}, "e": {}, "g": 2, ".priority": "d"}}
            """#
        let expected = try Node(jsonString: text)
        for subtreeBytes in [1, 12, 1 << 20] {
            let directory = Self.temporary(backendName)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await Self.importJSON(Array(text.utf8), into: directory, backend: backend, subtreeBytes: subtreeBytes)
            #expect(try await Self.load(in: directory, backend: backend) == expected, "subtree \(subtreeBytes)")
            let exported = String(decoding: try await Self.export(from: directory, backend: backend), as: UTF8.self)
            #expect(try Node(jsonString: exported) == expected)
            // The priority of the emptied object went with it: no row is left for it.
            #expect(!exported.contains(#""p""#), "\(exported)")
        }
    }

    @Test("a document that cannot be imported changes nothing and names the byte")
    func refusedDocument() async throws {
        let directory = Self.temporary("bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tree = try Node(jsonString: #"{"kept": {"a": 1}}"#)
        try await Self.importJSON(tree.jsonBytes(format: .export), into: directory, backend: .sqlite)
        for (bad, byte) in [(#"{"rooms": {"a": 1, "b.c": 2}}"#, 19), (#"{"rooms": {"a": 1,, "b": 2}}"#, 18), (#"{"rooms": [1, 2"#, 15)] {
            let error = try await #require(throws: ServerError.self) {
                try await Self.importJSON(Array(bad.utf8), into: directory, backend: .sqlite, subtreeBytes: 4)
            }
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("byte \(byte)"), "\(error)")
            #expect(try await Self.load(in: directory, backend: .sqlite) == tree)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [".rtdb-server.lock", "chat"])
        }
    }

    @Test("import and export refuse while the data directory is held, and change nothing")
    func refusedWhileLocked() async throws {
        let directory = Self.temporary("locked")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tree = try Node(jsonString: #"{"a": 1}"#)
        try await Self.importJSON(tree.jsonBytes(format: .export), into: directory, backend: .lmdb)
        let lock = try DataDirectoryLock(path: directory)
        let imported = try await #require(throws: ServerError.self) {
            try await Self.importJSON(Array(#"{"b": 2}"#.utf8), into: directory, backend: .lmdb)
        }
        #expect(imported.code == .unavailable)
        #expect(imported.message.contains("another rtdb-server is using the data directory"), "\(imported)")
        let exported = try await #require(throws: ServerError.self) { try await Self.export(from: directory, backend: .lmdb) }
        #expect(exported.code == .unavailable)
        withExtendedLifetime(lock) {}
        #expect(try await Self.load(in: directory, backend: .lmdb) == tree)
    }

    @Test("recovery puts a store moved aside back when no new one took its place, and removes what an import left")
    func recovery() throws {
        let directory = Self.temporary("recovery")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let directories = NamespaceDirectories(dataDirectory: directory, namespace: "chat")
        let manager = FileManager.default
        // Killed between moving the old store aside and moving the new one in.
        try manager.createDirectory(atPath: directories.staging, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory + "/chat.import-previous", withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: directory + "/chat.import-previous/marker"))
        #expect(try NamespaceDirectories.recoverInterruptedImports(in: directory) == ["chat"])
        #expect(try manager.contentsOfDirectory(atPath: directory) == ["chat"])
        #expect(try String(contentsOfFile: directory + "/chat/marker", encoding: .utf8) == "old")
        // Killed after the switch, while the old store was being removed.
        try manager.createDirectory(atPath: directories.staging + "/half", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory + "/chat.import-previous", withIntermediateDirectories: true)
        try directories.recover()
        #expect(try manager.contentsOfDirectory(atPath: directory) == ["chat"])
        #expect(try String(contentsOfFile: directory + "/chat/marker", encoding: .utf8) == "old")
        // A switch without exchange, then with.
        for exchange in [false, true] {
            try manager.createDirectory(atPath: directories.staging, withIntermediateDirectories: true)
            try Data("new \(exchange)".utf8).write(to: URL(fileURLWithPath: directories.staging + "/marker"))
            try directories.switchIn(exchange: exchange)
            #expect(try manager.contentsOfDirectory(atPath: directory) == ["chat"])
            #expect(try String(contentsOfFile: directory + "/chat/marker", encoding: .utf8) == "new \(exchange)")
        }
    }
}
