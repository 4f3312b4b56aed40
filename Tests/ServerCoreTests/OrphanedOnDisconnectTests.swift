import CoreTree
import Logging
import ServerCore
import Synchronization
import Testing

/// The onDisconnect writes of a dead node's connection, once claimed, must not be lost because
/// the store failed for a moment: the claim took them out of the shared store.
@Suite("Orphaned onDisconnect writes")
struct OrphanedOnDisconnectTests {
    static func held(_ path: String, _ value: Double) -> HeldWrite {
        HeldWrite(operation: .set(path: TreePath(unchecked: path), node: Node(.number(value))), caller: .admin)
    }

    static let logger = Logger(label: "test.orphans")

    @Test("a write the store could not commit is kept with the writes after it, in order, and runs at the next sweep")
    func storeFailureIsTriedAgain() async {
        let orphans = [
            OrphanedOnDisconnect(namespace: "a", writes: [Self.held("p/1", 1), Self.held("p/2", 2), Self.held("p/3", 3)]),
            OrphanedOnDisconnect(namespace: "b", writes: [Self.held("q/1", 1)]),
        ]
        let attempts = Mutex<[String]>([])
        // The store fails the second write of namespace a once; everything else commits.
        let failuresLeft = Mutex(1)
        func write(_ namespace: String, _ held: HeldWrite) -> WriteResult {
            let name = "\(namespace):\(held.operation.path.relativeForm)"
            attempts.withLock { $0.append(name) }
            if name == "a:p/2", failuresLeft.withLock({ left in defer { left -= 1 }; return left > 0 }) {
                return .failed(ServerError(.storageFailed, "PostgreSQL did not answer"))
            }
            return .committed(value: .empty)
        }
        let again = await OrphanedOnDisconnectRunner.runWrites(of: orphans, logger: Self.logger) { write($0, $1) }
        #expect(again.map(\.namespace) == ["a"], "only namespace a's connection waits")
        #expect(again.first?.writes.map(\.operation.path.relativeForm) == ["p/2", "p/3"], "the failed write and the one after it, in order")
        #expect(attempts.withLock { $0 } == ["a:p/1", "a:p/2", "b:q/1"], "a's third write waited behind its second; b's ran")

        let last = await OrphanedOnDisconnectRunner.runWrites(of: again, logger: Self.logger) { write($0, $1) }
        #expect(last.isEmpty, "nothing waits once the store commits")
        #expect(attempts.withLock { $0 } == ["a:p/1", "a:p/2", "b:q/1", "a:p/2", "a:p/3"], "each write committed exactly once")
    }

    @Test("a namespace that cannot open keeps its writes; a write the rules refuse is dropped and the next one runs")
    func unavailableKeptRefusedDropped() async {
        let orphans = [OrphanedOnDisconnect(namespace: "n", writes: [Self.held("denied", 1), Self.held("allowed", 2)])]
        let refused = await OrphanedOnDisconnectRunner.runWrites(of: orphans, logger: Self.logger) { _, held in
            held.operation.path.relativeForm == "denied" ? .failed(ServerError(.permissionDenied, "Permission denied")) : .committed(value: .empty)
        }
        #expect(refused.isEmpty, "a refused write is not tried again, and the one after it ran")

        let unavailable = await OrphanedOnDisconnectRunner.runWrites(of: orphans, logger: Self.logger) { _, _ in
            .failed(ServerError(.unavailable, "Namespace n cannot be opened now."))
        }
        #expect(unavailable.first?.writes.count == 2, "both writes wait while the namespace cannot open")
    }
}
