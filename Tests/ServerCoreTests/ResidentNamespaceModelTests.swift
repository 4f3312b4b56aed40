import CoreTree
import Foundation
import PersistenceSQLite
import QueryEngine
import Synchronization
import Testing
import TestSupport
@testable import ServerCore

/// The namespace holding part of its data in memory, driven by random operations against the
/// same namespace holding all of it (the model: everything read once at the start, under a
/// budget it never reaches) and against a plain tree: every answer, every write result and every
/// event a listener gets must be the same.
@Suite("Disk-resident namespace against the whole tree")
struct ResidentNamespaceModelTests {
    /// Rules whose answers depend on data outside the location a request touches, so a namespace
    /// holding part of its data must load what the rules read.
    private static let rules = """
        {"rules": {
          ".read": "root.child('closed').val() != true",
          ".write": "root.child('locked').val() != true",
          "a": {".validate": "!newData.parent().child('c').child('frozen').exists()"}
        }}
        """
    private static let user = Caller.user(auth: Node(children: [(key: ChildKey("uid"), value: Node(.string("ada")))]))
    private static let keys: [ChildKey] = ["a", "b", "c"]

    /// One namespace with everything that listens to it.
    private struct Side {
        let database: NamespaceDatabase
        let store: EmbeddedServerStore
        var subscribers: [RecordingSubscriber] = []
    }

    private struct Listen {
        let path: TreePath
        let params: QueryParams
        let index: Int
    }

    @Test("Random reads, writes, listens and queries under a 1-byte budget match the whole tree", arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomOperations(seed: UInt64) async throws {
        let directory = NSTemporaryDirectory() + "rtdb-model-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var random = SplitMix64(seed: seed)
        var subject = try await Self.open(directory + "/subject", budget: 1)
        var model = try await Self.open(directory + "/model", budget: .max)
        try await subject.database.installRules(Self.rules)
        try await model.database.installRules(Self.rules)
        // The model holds everything from the start: today's all-in-memory namespace.
        _ = try await model.database.read(.root, as: .admin)
        var oracle = Node.empty
        var listens: [Listen] = []

        for step in 0..<600 {
            let path = Self.randomPath(&random)
            let caller = random.next() % 4 == 0 ? Caller.admin : Self.user
            switch random.next() % 11 {
            case 0, 1, 2:
                let node = Self.randomValue(&random)
                let (a, b) = await (subject.database.write(.set(path: path, node: node), as: caller),
                                    model.database.write(.set(path: path, node: node), as: caller))
                try Self.expectSame(a, b, step)
                if case .committed = a { oracle = oracle.updatingChild(at: path, to: Self.resolved(node, existing: oracle.child(at: path))) }
            case 3:
                var children: [(path: TreePath, node: Node)] = []
                for key in Self.keys where random.next() % 2 == 0 { children.append((TreePath(keys: [key]), Self.randomValue(&random))) }
                if children.isEmpty { continue }
                let operation = WriteOperation.update(path: path, children: children)
                let (a, b) = await (subject.database.write(operation, as: caller), model.database.write(operation, as: caller))
                try Self.expectSame(a, b, step)
                if case .committed = a {
                    for child in children {
                        let location = path.appending(child.path)
                        oracle = oracle.updatingChild(at: location, to: Self.resolved(child.node, existing: oracle.child(at: location)))
                    }
                }
            case 4:
                // A compare-and-set, with the right hash or a stale one.
                let current = oracle.child(at: path)
                let hash = random.next() % 3 == 0 ? "stale" : current.hash
                let node = Self.randomValue(&random)
                let (a, b) = await (subject.database.write(.set(path: path, node: node), condition: .hash(hash), as: .admin),
                                    model.database.write(.set(path: path, node: node), condition: .hash(hash), as: .admin))
                try Self.expectSame(a, b, step)
                if case .committed = a { oracle = oracle.updatingChild(at: path, to: Self.resolved(node, existing: current)) }
            case 5:
                let a = await Self.outcome { try await subject.database.read(path, as: caller) }
                let b = await Self.outcome { try await model.database.read(path, as: caller) }
                #expect(a == b, "step \(step): read \(path)")
                if caller == .admin { #expect(a == Self.describe(oracle.child(at: path)), "step \(step): read \(path) as admin") }
            case 6:
                let a = await Self.outcome { try await subject.database.readShallow(path, as: caller) }
                let b = await Self.outcome { try await model.database.readShallow(path, as: caller) }
                #expect(a == b, "step \(step): shallow read \(path)")
            case 7, 8:
                let params = random.next() % 2 == 0 ? QueryParams.default : try QueryParams().orderedBy(.key).limitedToFirst(2)
                let index = subject.subscribers.count
                subject.subscribers.append(RecordingSubscriber())
                model.subscribers.append(RecordingSubscriber())
                let a = await Self.outcome {
                    try await subject.database.listen(subject.subscribers[index], path: path, params: params, tag: index, as: caller)
                }
                let b = await Self.outcome {
                    try await model.database.listen(model.subscribers[index], path: path, params: params, tag: index, as: caller)
                }
                #expect(a == b, "step \(step): listen \(path)")
                if !a.hasPrefix("error") { listens.append(Listen(path: path, params: params, index: index)) }
            case 9:
                // Writes submitted one after another without waiting, then a read: it loads from
                // the store while their commits are in flight, and must see all of them.
                let operations = (0..<3).map { _ in WriteOperation.set(path: Self.randomPath(&random), node: Self.randomValue(&random)) }
                let (a, b) = (Completions(), Completions())
                for operation in operations {
                    await subject.database.submit(operation, as: .admin) { a.add($0) }
                    await model.database.submit(operation, as: .admin) { b.add($0) }
                }
                let readA = await Self.outcome { try await subject.database.read(path, as: .admin) }
                let readB = await Self.outcome { try await model.database.read(path, as: .admin) }
                // A shallow read of the parent: the store's answer with the children the writes touched from memory.
                let parent = path.parent ?? .root
                let shallowA = await Self.outcome { try await subject.database.readShallow(parent, as: .admin) }
                let shallowB = await Self.outcome { try await model.database.readShallow(parent, as: .admin) }
                let (resultsA, resultsB) = await (a.wait(for: 3), b.wait(for: 3))
                #expect(resultsA.map(Self.describe) == resultsB.map(Self.describe), "step \(step)")
                for (operation, result) in zip(operations, resultsA) {
                    if case .committed = result, case .set(let location, let node) = operation {
                        oracle = oracle.updatingChild(at: location, to: Self.resolved(node, existing: oracle.child(at: location)))
                    }
                }
                #expect(readA == readB, "step \(step): read \(path) behind writes in flight")
                #expect(readA == Self.describe(oracle.child(at: path)), "step \(step): read \(path) behind writes in flight")
                #expect(shallowA == shallowB, "step \(step): shallow read \(parent) behind writes in flight")
            default:
                guard !listens.isEmpty else { continue }
                let listen = listens.remove(at: Int(random.next() % UInt64(listens.count)))
                let a = await subject.database.unlisten(subject.subscribers[listen.index], path: listen.path, params: listen.params, tag: listen.index)
                let b = await model.database.unlisten(model.subscribers[listen.index], path: listen.path, params: listen.params, tag: listen.index)
                #expect(a && b)
            }
            if step % 150 == 149 {
                // A restart of the subject: its listens end, and it opens with nothing in memory.
                try await subject.database.close()
                for listen in listens {
                    _ = await model.database.unlisten(model.subscribers[listen.index], path: listen.path, params: listen.params, tag: listen.index)
                }
                listens = []
                subject = try await Self.open(directory + "/subject", budget: 1, subscribers: subject.subscribers)
                #expect(await subject.database.cacheUsage.entries == 0, "opening reads nothing")
            }
        }
        for index in subject.subscribers.indices {
            let heard = subject.subscribers[index].received.map(Self.describe)
            let expected = model.subscribers[index].received.map(Self.describe)
            #expect(heard == expected, "listener \(index)")
        }
        #expect(try await subject.store.load() == oracle)
        #expect(try await model.store.load() == oracle)
        let usage = await subject.database.cacheUsage
        #expect(usage.bytes == usage.heldBytes, "with a 1-byte budget, only held data stays: \(usage)")
        try await subject.database.close()
        try await model.database.close()
    }

    @Test("A watched location stays in memory under any budget; a write elsewhere adds nothing to memory")
    func heldDataStays() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-held-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let side = try await Self.open(directory, budget: 1)
        let room = TreePath(unchecked: "rooms/r1")
        _ = await side.database.write(.set(path: room, node: Node(children: [(key: ChildKey("title"), value: Node(.string("one")))])), as: .admin)
        let listener = RecordingSubscriber()
        try await side.database.listen(listener, path: room, params: .default, tag: nil, as: .admin)
        let held = await side.database.cacheUsage
        #expect(held.entries == 1 && held.bytes > 0 && held.bytes == held.heldBytes)
        for index in 0..<50 {
            _ = await side.database.write(.set(path: TreePath(unchecked: "rooms/r\(index + 2)/title"), node: Node(.number(Double(index)))), as: .admin)
            _ = try await side.database.read(TreePath(unchecked: "rooms/r\(index + 2)"), as: .admin)
        }
        #expect(await side.database.cacheUsage == held, "reads and writes elsewhere leave nothing behind under a 1-byte budget")
        _ = await side.database.write(.set(path: room.child("title"), node: Node(.string("two"))), as: .admin)
        #expect(try await side.database.read(room, as: .admin) == Node(children: [(key: ChildKey("title"), value: Node(.string("two")))]))
        guard case .overwrite(let node)? = listener.received.last?.change else {
            Issue.record("expected an overwrite, got \(listener.received)")
            return
        }
        #expect(node == Node(.string("two")))
        try await side.database.close()
    }

    @Test("A read larger than 256 MB gets Firebase's error, not the data")
    func readLimit() async throws {
        let store = LimitedStore()
        let database = try await NamespaceDatabase.open(name: "big", store: store)
        await #expect(throws: ServerError.self) { try await database.read(.root, as: .admin) }
        do {
            _ = try await database.read(.root, as: .admin)
        } catch {
            #expect(error.code == .tooBig)
            #expect(error.message == "Data requested exceeds the maximum size that can be accessed with a single request.")
        }
        #expect(store.limits.withLock { $0 }.allSatisfy { $0 == ServerError.maxReadBytes || $0 == 1024 })
    }

    // MARK: - Helpers

    private static func open(_ directory: String, budget: Int, subscribers: [RecordingSubscriber] = []) async throws -> Side {
        let store = try await EmbeddedServerStore.open(.sqlite, directory: directory)
        let database = try await NamespaceDatabase.open(
            name: "model", store: store, clock: { 1_000 }, metrics: nil, budget: CacheBudget(limit: budget))
        return Side(database: database, store: store, subscribers: subscribers)
    }

    private static func randomPath(_ random: inout SplitMix64) -> TreePath {
        let depth = Int(random.next() % 3)
        let path = TreePath(keys: (0..<depth).map { _ in keys[Int(random.next() % UInt64(keys.count))] })
        // The rules' switches are written now and then, at the top.
        if depth == 1, random.next() % 4 == 0 { return TreePath(keys: [random.next() % 2 == 0 ? "locked" : "closed"]) }
        return path
    }

    private static func randomValue(_ random: inout SplitMix64) -> Node {
        switch random.next() % 7 {
        case 0: return .empty
        case 1: return Node(.bool(random.next() % 2 == 0))
        case 2: return ServerValue.increment(Double(random.next() % 5))
        case 3: return ServerValue.timestamp
        case 4: return Node(.string("s\(random.next() % 10)"))
        default:
            var children: [(key: ChildKey, value: Node)] = []
            for key in keys where random.next() % 2 == 0 { children.append((key, Node(.number(Double(random.next() % 100))))) }
            if random.next() % 5 == 0 { children.append(("frozen", Node(.bool(true)))) }
            return Node(children: children)
        }
    }

    /// `node` with its server values resolved as both namespaces resolve them (the clock reads 1000).
    private static func resolved(_ node: Node, existing: Node) -> Node {
        (try? ServerValue.resolve(node, existing: existing, serverTime: 1_000)) ?? node
    }

    private static func expectSame(_ a: WriteResult, _ b: WriteResult, _ step: Int) throws {
        #expect(describe(a) == describe(b), "step \(step)")
    }

    private static func outcome(_ body: () async throws -> Node) async -> String {
        do {
            return describe(try await body())
        } catch {
            return "error \(error)"
        }
    }

    private static func describe(_ node: Node) -> String { node.jsonString(format: .export) }

    private static func describe(_ result: WriteResult) -> String {
        switch result {
        case .committed(let value): "committed \(describe(value))"
        case .stale(let current): "stale \(describe(current))"
        case .failed(let error): "failed \(error.code)"
        }
    }

    private static func describe(_ update: ListenUpdate) -> String {
        "\(update.listenPath) \(update.tag.map(String.init) ?? "-") \(update.path) \(update.isInitial) \(update.payload.exportForm)"
    }
}

/// Write results as they arrive, and a wait for a number of them.
private final class Completions: Sendable {
    private let state = Mutex<(results: [WriteResult], waiter: (count: Int, continuation: CheckedContinuation<[WriteResult], Never>)?)>(([], nil))

    func add(_ result: WriteResult) {
        let ready = state.withLock { state -> (CheckedContinuation<[WriteResult], Never>, [WriteResult])? in
            state.results.append(result)
            guard let waiter = state.waiter, state.results.count >= waiter.count else { return nil }
            state.waiter = nil
            return (waiter.continuation, state.results)
        }
        if let (continuation, results) = ready { continuation.resume(returning: results) }
    }

    func wait(for count: Int) async -> [WriteResult] {
        await withCheckedContinuation { continuation in
            let results = state.withLock { state -> [WriteResult]? in
                if state.results.count >= count { return state.results }
                state.waiter = (count, continuation)
                return nil
            }
            if let results { continuation.resume(returning: results) }
        }
    }
}

/// A store whose root holds more than one read may answer: it records the limits it was asked
/// for and refuses as a store does.
private final class LimitedStore: ServerStore {
    let limits = Mutex<[Int]>([])

    func read(at path: TreePath, limit: Int) async throws -> StoredData {
        limits.withLock { $0.append(limit) }
        if path.isRoot { throw ServerError.readTooLarge }
        return StoredData(node: .empty, version: 0)
    }
    func readShallow(at path: TreePath, limit: Int) async throws -> StoredShallowData { StoredShallowData(leaf: nil, children: [:]) }
    func commit(_ change: StoreChange) async throws {}
    func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws { throw ServerError.readTooLarge }
    func setting(named name: String) async throws -> [UInt8]? { nil }
    func settings(withPrefix prefix: String) async throws -> [StoreSetting] { [] }
    func saveSetting(named name: String, _ value: [UInt8]) async throws {}
    func close() async throws {}
}
