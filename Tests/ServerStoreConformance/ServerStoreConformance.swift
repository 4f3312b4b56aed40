import CoreTree
import Foundation
public import ServerCore
import Synchronization
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The ``ServerCore/ServerStore`` conformance suite: every store implementation's tests run
/// each ``Requirement`` and print `serverstore conformance <name>: N passed, M failed`.
public struct ServerStoreConformance: Sendable {
    /// One named promise of the store contract.
    public enum Requirement: String, CaseIterable, Sendable, CustomStringConvertible {
        case emptyStart = "load: a new store loads the empty tree"
        case roundTripAndReopen = "commit: random changes load back exactly, also after close and reopen"
        case orderWithinAndAcross = "order: later commits win; a change and changes inside it in one commit apply in order"
        case prioritiesAndLongPaths = "data: priorities and a 32-level, 768-byte path survive"
        case settings = "settings: absent, saved, replaced, kept across reopen, independent of the tree"
        case settingsInCommits = "settings: a commit's settings are stored with it, an empty value removes one, a prefix lists them"
        case closed = "close: every call on a closed store throws"
        case orderedWrites = "commit: a commit's writes apply in order, priorities of emptied parents go, also in one commit (random, against the model)"
        case partialReads = "read: a subtree, below a leaf, a missing path, with the version of the last commit"
        case shallowReads = "shallow: each child once, leaves with values, keys sorting between a child and its rows, a leaf location"
        case readLimit = "limit: a read or shallow read over its byte limit throws tooBig"
        case exportSnapshot = "export: the whole tree as export JSON from one moment, while commits land between its pieces"
        case atomicAndDurableUnderSIGKILL = "durability: a writer killed with SIGKILL loses no committed change and shows no partial one (10 rounds)"

        public var description: String { rawValue }
    }

    /// The store's name (in test output and for the crash writer).
    public let name: String
    /// Whether the store outlives its process.
    public let outlivesProcess: Bool
    private let openStore: @Sendable (String) async throws -> any ServerStore

    /// A suite for stores opened by `open` on a directory.
    public init(name: String, outlivesProcess: Bool = true, open: @escaping @Sendable (String) async throws -> any ServerStore) {
        self.name = name
        self.outlivesProcess = outlivesProcess
        self.openStore = open
    }

    /// Runs one requirement; throws when the store breaks it.
    public func check(_ requirement: Requirement) async throws {
        let directory = NSTemporaryDirectory() + "serverstore-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        switch requirement {
        case .emptyStart: try await emptyStart(directory)
        case .roundTripAndReopen: try await roundTripAndReopen(directory)
        case .orderWithinAndAcross: try await orderWithinAndAcross(directory)
        case .prioritiesAndLongPaths: try await prioritiesAndLongPaths(directory)
        case .settings: try await settings(directory)
        case .settingsInCommits: try await settingsInCommits(directory)
        case .closed: try await closed(directory)
        case .orderedWrites: try await orderedWrites(directory)
        case .partialReads: try await partialReads(directory)
        case .shallowReads: try await shallowReads(directory)
        case .readLimit: try await readLimit(directory)
        case .exportSnapshot: try await exportSnapshot(directory)
        case .atomicAndDurableUnderSIGKILL: try await atomicAndDurableUnderSIGKILL(directory)
        }
    }

    /// Runs a requirement, recording the tally line (a requirement that does not apply passes).
    public func checkAndRecord(_ requirement: Requirement) async throws {
        var outcome: Result<Void, any Error>
        do {
            try await check(requirement)
            outcome = .success(())
        } catch let error as NotApplicable {
            print("serverstore conformance \(name): '\(requirement)' does not apply: \(error)")
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        ServerStoreTally.shared.record(name, passed: (try? outcome.get()) != nil, total: Requirement.allCases.count)
        try outcome.get()
    }

    /// Opens the store in `directory`, runs `body` with it and closes it, also when `body` throws.
    private func withStore<T>(_ directory: String, _ body: (any ServerStore) async throws -> T) async throws -> T {
        let store = try await openStore(directory)
        do {
            let result = try await body(store)
            try await store.close()
            return result
        } catch {
            try? await store.close()
            throw error
        }
    }

    // MARK: - Checks

    private func emptyStart(_ directory: String) async throws {
        try await withStore(directory) { store in
            let loaded = try await store.load()
            try expect(loaded == .empty, "a new store loaded \(loaded)")
        }
    }

    private func roundTripAndReopen(_ directory: String) async throws {
        var random = SplitMix64(seed: 7)
        var model = Node.empty
        var store = try await openStore(directory)
        for round in 1...60 {
            var paths: [TreePath] = []
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let path = TreePath(keys: (0..<(1 + Int(random.next() % 3))).map { _ in ChildKey("k\(random.next() % 4)") })
                let node: Node = random.next() % 5 == 0 ? .empty
                    : random.next() % 2 == 0 ? Node(.number(Double(random.next() % 1000)))
                    : Node(children: ["v": Node(.string("s\(random.next() % 50)")), "n": Node(.number(Double(round)))])
                model = model.updatingChild(at: path, to: node)
                paths.append(path)
            }
            try await store.commit(StoreChange(root: model, changedPaths: paths))
            if round % 20 == 0 {
                try await store.close()
                store = try await openStore(directory)
            }
            let loaded = try await store.load()
            try expect(loaded == model, "round \(round): loaded \(loaded), expected \(model)")
        }
        try await store.close()
    }

    private func orderWithinAndAcross(_ directory: String) async throws {
        try await withStore(directory) { store in
            var root = try Node(jsonString: #"{"a":{"b":{"c":1,"d":2},"e":3},"f":4}"#)
            try await store.commit(StoreChange(root: root, changedPaths: [.root]))
            // One commit: replace a, then write inside it.
            root = root.updatingChild(at: "a", to: Node(children: ["x": Node(.number(9))]))
            root = root.updatingChild(at: "a/y/z", to: Node(.bool(true)))
            try await store.commit(StoreChange(root: root, changedPaths: ["a", "a/y/z"]))
            var loaded = try await store.load()
            try expect(loaded == root, "within a commit: loaded \(loaded)")
            // Across commits: a removal, then a leaf where the removed subtree was, then a removal above.
            root = root.updatingChild(at: "a/x", to: .empty)
            try await store.commit(StoreChange(root: root, changedPaths: ["a/x"]))
            root = root.updatingChild(at: "a", to: Node(.string("leaf")))
            try await store.commit(StoreChange(root: root, changedPaths: ["a"]))
            loaded = try await store.load()
            try expect(loaded == root, "a leaf replacing a subtree: loaded \(loaded)")
            root = root.updatingChild(at: "a", to: .empty).updatingChild(at: "f", to: .empty)
            try await store.commit(StoreChange(root: root, changedPaths: ["a", "f"]))
            loaded = try await store.load()
            try expect(loaded == .empty, "everything removed: loaded \(loaded)")
        }
    }

    private func prioritiesAndLongPaths(_ directory: String) async throws {
        let longKey = String(repeating: "k", count: 22)
        let path = TreePath(keys: (0..<31).map { _ in ChildKey(longKey) } + [ChildKey("leaf")])
        try expect(path.depth == 32, "the long path has \(path.depth) levels")
        var root = Node.empty
        root = root.updatingChild(at: path, to: Node(.string("deep")))
        root = root.updatingChild(at: "p", to: try Node(jsonString: #"{".priority":"high","a":{".value":1,".priority":2}}"#))
        try await withStore(directory) { store in
            try await store.commit(StoreChange(root: root, changedPaths: [path, "p"]))
        }
        let loaded = try await withStore(directory) { try await $0.load() }
        try expect(loaded.child(at: path) == Node(.string("deep")), "the 32-level path loaded \(loaded.child(at: path))")
        try expect(loaded.child(at: "p").jsonString(format: .export) == root.child(at: "p").jsonString(format: .export),
                   "priorities loaded as \(loaded.child(at: "p").jsonString(format: .export))")
    }

    private func settings(_ directory: String) async throws {
        try await withStore(directory) { store in
            try expect(try await store.setting(named: "rules") == nil, "a new store has a setting")
            try await store.saveSetting(named: "rules", Array("one".utf8))
            try await store.saveSetting(named: "rules", Array("two".utf8))
            try await store.saveSetting(named: "other", [0, 255])
            try await store.commit(StoreChange(root: Node(children: ["rules": Node(.number(1))]), changedPaths: ["rules"]))
        }
        try await withStore(directory) { store in
            try expect(try await store.setting(named: "rules") == Array("two".utf8), "the rules setting was not replaced and kept")
            try expect(try await store.setting(named: "other") == [0, 255], "a second setting was lost")
            try expect(try await store.load() == Node(children: ["rules": Node(.number(1))]), "settings and data are not independent")
        }
    }

    private func settingsInCommits(_ directory: String) async throws {
        let root = Node(children: ["a": Node(.number(1))])
        try await withStore(directory) { store in
            try await store.commit(StoreChange(root: root, changedPaths: ["a"], settings: [
                StoreSetting(name: "writers/x", value: Array("1 5".utf8)), StoreSetting(name: "writers/y", value: Array("2 6".utf8)),
                StoreSetting(name: "writersnot", value: [1]),
            ]))
            try await store.commit(StoreChange(root: root, changedPaths: [], settings: [
                StoreSetting(name: "writers/x", value: Array("3 7".utf8)), StoreSetting(name: "writers/y", value: []),
            ]))
            try await store.saveSetting(named: "writers/z", Array("4".utf8))
            try await store.saveSetting(named: "writers/z", [])
        }
        try await withStore(directory) { store in
            let loaded = try await store.load()
            try expect(loaded == root, "the tree changed: \(loaded)")
            try expect(try await store.setting(named: "writers/x") == Array("3 7".utf8), "a setting replaced by a later commit")
            try expect(try await store.setting(named: "writers/y") == nil, "an empty value in a commit did not remove the setting")
            try expect(try await store.setting(named: "writers/z") == nil, "an empty saveSetting did not remove the setting")
            let listed = try await store.settings(withPrefix: "writers/").sorted { $0.name < $1.name }
            try expect(listed == [StoreSetting(name: "writers/x", value: Array("3 7".utf8))], "the prefix listed \(listed.map(\.name))")
        }
    }

    /// Random commits of several ordered writes each (sets, removals, priorities, writes into
    /// leaves), as a namespace hands them over: the stored data must be the model's after each.
    private func orderedWrites(_ directory: String) async throws {
        var random = SplitMix64(seed: 23)
        let keys: [ChildKey] = ["a", "b", "c"]
        func randomPath() -> TreePath {
            TreePath(keys: (0..<(1 + Int(random.next() % 3))).map { _ in keys[Int(random.next() % 3)] })
        }
        func randomNode() -> Node {
            let number = Node(.number(Double(random.next() % 100)))
            switch random.next() % 6 {
            case 0, 1: return .empty
            case 2: return number
            case 3: return Node(.string("s"), priority: .number(Double(random.next() % 5)))
            case 4: return Node(children: ["x": number], priority: .string("p\(random.next() % 3)"))
            default: return Node(children: ["a": number, "b": Node(children: ["c": Node(.string("t"))])])
            }
        }
        try await withStore(directory) { store in
            var model = Node.empty
            for round in 1...300 {
                var writes: [StoreWrite] = []
                for _ in 0..<(1 + Int(random.next() % 5)) {
                    var path = randomPath()
                    var node = randomNode()
                    if random.next() % 6 == 0 {
                        // A priority write, as clients send setPriority.
                        path = path.child(.priority)
                        node = random.next() % 3 == 0 ? .empty : Node(.number(Double(random.next() % 9)))
                    }
                    model = model.updatingChild(at: path, to: node)
                    // The data the namespace hands over for the write: what is at its path now.
                    writes.append(StoreWrite(path: path, node: model.child(at: path)))
                }
                try await store.commit(StoreChange(writes: writes, version: UInt64(round)))
                let loaded = try await store.load()
                try expect(loaded.jsonString(format: .export) == model.jsonString(format: .export),
                           "round \(round) (\(writes.map { "\($0.path.wireForm)=\($0.node.jsonString(format: .export))" })): loaded \(loaded.jsonString(format: .export)), expected \(model.jsonString(format: .export))")
            }
        }
    }

    /// ``ServerStore/exportSnapshot(_:)``: after each piece, a commit changes two counters at
    /// either end of the key order; the document must hold the data from before the export,
    /// priorities and keys that sort around `/` included, and a later export the last commit.
    private func exportSnapshot(_ directory: String) async throws {
        try await withStore(directory) { store in
            let filler = String(repeating: "e", count: 1000)
            var root = try Node(jsonString: #"{"aaa":{"count":1,".priority":"p"},"zzz":{"count":1},"tree":{"a":{"b":{".value":1,".priority":2},"c":{"d":"x\"y"},".priority":3},"a!x":true,"a-x":2,"a0":[1,2]},".priority":4}"#)
            root = root.updatingChild(at: "bulk", to: Node(children: (0..<1500).map { (key: ChildKey("m\($0)"), value: Node(.string(filler))) }))
            try await store.commit(StoreChange(writes: [StoreWrite(path: .root, node: root)], version: 1))
            var document: [UInt8] = []
            var pieces = 0
            try await store.exportSnapshot { piece in
                document += piece
                pieces += 1
                let value = Node(.number(Double(1 + pieces)))
                try await store.commit(StoreChange(
                    writes: [StoreWrite(path: "aaa/count", node: value), StoreWrite(path: "zzz/count", node: value)], version: UInt64(1 + pieces)))
            }
            try expect(pieces > 1, "the export of 1.5 MB came in \(pieces) piece(s)")
            let exported = try Node(json: document)
            try expect(exported.jsonString(format: .export) == root.jsonString(format: .export),
                       "the export is not the data from before it began: aaa/count \(exported.child(at: "aaa/count")), zzz/count \(exported.child(at: "zzz/count")), tree \(exported.child(at: "tree").jsonString(format: .export))")
            var after: [UInt8] = []
            try await store.exportSnapshot { after += $0 }
            let last = try Node(json: after)
            try expect(last.child(at: "aaa/count") == Node(.number(Double(1 + pieces))) && last.child(at: "zzz/count") == Node(.number(Double(1 + pieces))),
                       "a later export misses the commits made during the first")
        }
    }

    private func partialReads(_ directory: String) async throws {
        try await withStore(directory) { store in
            let root = try Node(jsonString: #"{"users":{"ada":{"name":"Ada","age":36},"bob":{".value":"x",".priority":3}},"leaf":5,"rooms":{"r1":{"m":{".priority":"p","t":"hi"}}}}"#)
            try await store.commit(StoreChange(writes: [StoreWrite(path: .root, node: root)], version: 41))
            var read = try await store.read(at: "users/ada", limit: .max)
            try expect(read.node == root.child(at: "users/ada"), "users/ada read \(read.node)")
            try expect(read.version == 41 || read.version > 0, "the version read is \(read.version)")
            read = try await store.read(at: "users/bob", limit: .max)
            try expect(read.node.jsonString(format: .export) == root.child(at: "users/bob").jsonString(format: .export), "a leaf with priority read \(read.node.jsonString(format: .export))")
            read = try await store.read(at: "rooms/r1/m", limit: .max)
            try expect(read.node.jsonString(format: .export) == root.child(at: "rooms/r1/m").jsonString(format: .export), "a node with priority read \(read.node.jsonString(format: .export))")
            try expect(try await store.read(at: "leaf/below", limit: .max).node == .empty, "a path below a leaf is not empty")
            try expect(try await store.read(at: "nobody/here", limit: .max).node == .empty, "a missing path is not empty")
            try expect(try await store.read(at: "leaf", limit: .max).node == Node(.number(5)), "a leaf read wrong")
            try await store.commit(StoreChange(writes: [StoreWrite(path: "users/ada/age", node: Node(.number(37)))], version: 42))
            read = try await store.read(at: "users", limit: .max)
            try expect(read.node.child(at: "ada/age") == Node(.number(37)), "a read after a commit does not see it")
            try expect(read.version == 42 || read.version > 1, "the version after a second commit is \(read.version)")
        }
    }

    private func shallowReads(_ directory: String) async throws {
        try await withStore(directory) { store in
            // "a-b", "a.b" and "a b" sort between "a"'s own row and the rows below "a".
            let root = try Node(jsonString: #"{"p":{"a":{"x":{"y":1},"z":2},"a-b":true,"a.b":{"q":"r"},"a b":"s","b":{".value":7,".priority":1},"c":{"d":1}},"leaf":"v"}"#)
                .updatingChild(at: "p", to: try Node(jsonString: #"{"a":{"x":{"y":1},"z":2},"a-b":true,"a.b":{"q":"r"},"a b":"s","b":{".value":7,".priority":1},"c":{"d":1},".priority":9}"#))
            try await store.commit(StoreChange(writes: [StoreWrite(path: .root, node: root)]))
            let shallow = try await store.readShallow(at: "p", limit: .max)
            let expected: [ChildKey: Node?] = ["a": nil, "a-b": Node(.bool(true)), "a.b": nil, "a b": Node(.string("s")), "b": Node(.number(7)), "c": nil]
            try expect(shallow.leaf == nil && shallow.children == expected, "shallow p read \(shallow)")
            try expect(shallow.node == (try Node(jsonString: #"{"a":true,"a-b":true,"a.b":true,"a b":"s","b":7,"c":true}"#)), "as Firebase shows it: \(shallow.node)")
            let leaf = try await store.readShallow(at: "leaf", limit: .max)
            try expect(leaf.leaf == Node(.string("v")) && leaf.children.isEmpty, "shallow of a leaf read \(leaf)")
            let top = try await store.readShallow(at: .root, limit: .max)
            try expect(top.children == ["p": nil, "leaf": Node(.string("v"))], "shallow of the root read \(top)")
            let missing = try await store.readShallow(at: "p/a-b/below", limit: .max)
            try expect(missing.leaf == nil && missing.children.isEmpty, "shallow below a leaf read \(missing)")
        }
    }

    private func readLimit(_ directory: String) async throws {
        try await withStore(directory) { store in
            var children: [ChildKey: Node] = [:]
            for index in 0..<200 { children[ChildKey("child\(index)")] = Node(.string(String(repeating: "x", count: 100))) }
            try await store.commit(StoreChange(writes: [StoreWrite(path: "big", node: Node(children: children))]))
            for limit in [1000, 5000] {
                do {
                    _ = try await store.read(at: "big", limit: limit)
                    try expect(false, "a read of ~20 KB under a \(limit)-byte limit succeeded")
                } catch let error as ServerError {
                    try expect(error.code == .tooBig && error.message.hasPrefix("Data requested exceeds the maximum size"), "the error was \(error)")
                }
            }
            do {
                _ = try await store.readShallow(at: "big", limit: 1000)
                try expect(false, "a shallow read of ~20 KB under a 1000-byte limit succeeded")
            } catch let error as ServerError {
                try expect(error.code == .tooBig, "the shallow error was \(error)")
            }
            try expect(try await store.read(at: "big", limit: 100_000).node.childCount == 200, "a read within its limit failed")
            try expect(try await store.readShallow(at: "big", limit: 100_000).children.count == 200, "a shallow read within its limit failed")
        }
    }

    private func closed(_ directory: String) async throws {
        let store = try await openStore(directory)
        try await store.close()
        try expect((try? await store.load()) == nil, "load after close succeeded")
        try expect((try? await store.commit(StoreChange(root: Node(.number(1)), changedPaths: [.root]))) == nil, "commit after close succeeded")
        try expect((try? await store.saveSetting(named: "x", [1])) == nil, "saveSetting after close succeeded")
    }

    /// A child process commits change N (`counter` = N and `log/N` = N together, and the setting
    /// `writers/crash` = N in the same commit) and prints `committed N` after each returns; it is
    /// killed at a random moment. The store must then hold exactly one whole prefix of commits, at
    /// least up to the last one reported, with the setting of the same commit.
    private func atomicAndDurableUnderSIGKILL(_ directory: String) async throws {
        guard outlivesProcess else { throw NotApplicable(reason: "the store does not outlive its process") }
        var random = SplitMix64(seed: 11)
        for round in 1...10 {
            let before = try await countCommits(directory, round: round, reported: 0)
            let wanted = Int(random.next() % 16)
            let delay = useconds_t(random.next() % 3_000)
            let (name, executable) = (self.name, try ServerStoreConformance.crashWriter())
            // The child process is started, waited for and read on a thread of its own.
            let (reason, status, printed) = try await offThePool { () throws -> (Process.TerminationReason, Int32, String) in
                let process = Process()
                process.executableURL = executable
                process.arguments = [name, directory, String(before + 1)]
                let output = Pipe()
                process.standardOutput = output
                process.standardError = FileHandle.nullDevice
                try process.run()
                // The writer's progress is the barrier (a random number of reported commits, 0 in
                // some rounds), so a slow machine delays the kill rather than leaving the writer no
                // time; the short delay after it only picks where in the next commit SIGKILL lands.
                var seen: Data
                do {
                    seen = try ProgressBarrier.read(output, untilLines: wanted, startingWith: "committed ")
                } catch {
                    kill(process.processIdentifier, SIGKILL)
                    process.waitUntilExit()
                    throw error
                }
                usleep(delay)
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                seen.append(output.fileHandleForReading.readDataToEndOfFile())
                let printed = String(decoding: seen, as: UTF8.self)
                return (process.terminationReason, process.terminationStatus, printed)
            }
            try expect(reason == .uncaughtSignal, "round \(round): the writer exited by itself (\(status))")
            let reported = printed.split(separator: "\n").compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max() ?? before
            _ = try await countCommits(directory, round: round, reported: reported)
        }
    }

    private func countCommits(_ directory: String, round: Int, reported: Int) async throws -> Int {
        try await withStore(directory) { store in
            let root = try await store.load()
            guard case .number(let counterValue)? = root.immediateChild("counter").leafValue else {
                try expect(root.isEmpty, "round \(round): no counter but data \(root)")
                try expect(reported == 0, "round \(round): commit \(reported) was reported but nothing loaded")
                return 0
            }
            let counter = Int(counterValue)
            let log = root.immediateChild("log")
            try expect(log.childCount == counter, "round \(round): counter \(counter) but \(log.childCount) log entries: a partial commit")
            try expect(log.immediateChild(ChildKey(String(counter))) == Node(.number(Double(counter))), "round \(round): log misses entry \(counter)")
            try expect(counter >= reported, "round \(round): commit \(reported) was reported but the store holds \(counter)")
            let setting = try await store.setting(named: "writers/crash").map { String(decoding: $0, as: UTF8.self) }
            try expect(setting == String(counter), "round \(round): the tree is at commit \(counter) but its setting at \(setting ?? "none")")
            return counter
        }
    }

    /// Runs commits for the SIGKILL check, forever: the body of `serverstore-crash-writer`.
    public func runCrashWriter(directory: String, first: Int) async throws -> Never {
        let store = try await openStore(directory)
        var root = try await store.load()
        var next = first
        while true {
            root = root.updatingChild(at: "counter", to: Node(.number(Double(next))))
            let entry = TreePath(keys: ["log", ChildKey(String(next))])
            root = root.updatingChild(at: entry, to: Node(.number(Double(next))))
            try await store.commit(StoreChange(root: root, changedPaths: ["counter", entry],
                                               settings: [StoreSetting(name: "writers/crash", value: Array(String(next).utf8))]))
            FileHandle.standardOutput.write(Data("committed \(next)\n".utf8))
            next += 1
        }
    }

    /// A namespace name for a store that lives in a database rather than a directory: made from
    /// the directory the suite hands out, so it is unique per check and the same on reopen.
    public static func namespaceName(forDirectory directory: String) -> String {
        let last = (directory as NSString).lastPathComponent.lowercased()
        return "c" + String(last.filter { $0.isLetter || $0.isNumber }.suffix(40))
    }

    static func crashWriter() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("serverstore-crash-writer")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw Failure(message: "serverstore-crash-writer is not built next to the test binary; run `swift build --build-tests` first")
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Failure(message: "\(name): \(message())") }
    }

    /// A broken promise.
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// A requirement that does not apply to this store (it passes without running).
    public struct NotApplicable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }
}

/// Counts results per store and prints the plain tally line once every requirement ran.
final class ServerStoreTally: Sendable {
    static let shared = ServerStoreTally()
    private let counts = Mutex<[String: (passed: Int, failed: Int)]>([:])

    func record(_ name: String, passed: Bool, total: Int) {
        let line: String? = counts.withLock { counts in
            var count = counts[name] ?? (0, 0)
            if passed { count.passed += 1 } else { count.failed += 1 }
            counts[name] = count
            guard count.passed + count.failed == total else { return nil }
            return "serverstore conformance \(name): \(count.passed) passed, \(count.failed) failed"
        }
        if let line { print(line) }
    }
}
