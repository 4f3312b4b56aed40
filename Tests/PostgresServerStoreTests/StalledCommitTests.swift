import CoreTree
import Foundation
import Logging
import PostgresServerStore
import ServerCore
import Testing
import TestSupport

extension PostgresTests {
/// A node that stops answering inside a commit (cut off from PostgreSQL, or stalled) must not
/// hold its namespace's lock for hours: PostgreSQL waits for a silent client's next command
/// indefinitely, and every other node's commits to the namespace would wait with it.
@Suite("A node stalled inside a commit")
struct StalledCommitTests {
    static func commit(_ value: Int, _ store: any SharedServerStore, decide: @escaping @Sendable () async -> Void = {}) async throws -> UInt64 {
        let path = TreePath(unchecked: "value")
        let node = Node(.number(Double(value)))
        let change = StoreChange(root: Node.empty.updatingChild(at: path, to: node), changedPaths: [path])
        return try await store.commitExclusively(after: 0) { _ in
            await decide()
            return SharedCommit(change: change, writes: [.set(path: path, node: node)])
        }
    }

    @Test("another node commits once PostgreSQL ends the stalled node's idle transaction; the stalled commit is not stored")
    func stalledCommitReleasesTheLock() async throws {
        let url = try TestPostgres.url()
        let namespace = TestPostgres.freshNamespace("stall")
        let stalledNode = try PostgresStoreProvider(url: url, logger: Logger(label: "test.stalled"))
        let otherNode = try PostgresStoreProvider(url: url, logger: Logger(label: "test.other"))
        let release = Latch()
        var failure: (any Error)?
        do {
            guard let stalled = try await stalledNode.openStore(namespace: namespace) as? any SharedServerStore,
                  let other = try await otherNode.openStore(namespace: namespace) as? any SharedServerStore else {
                throw SupportFailure("the PostgreSQL store is not a SharedServerStore")
            }
            let (entered, enter) = AsyncStream<Void>.makeStream()
            // Holds the namespace's lock (its commit decides under it) and then says nothing,
            // whatever is cancelled, until the other node has committed: a stalled node.
            let stalledCommit = Task {
                try await Self.commit(1, stalled) {
                    enter.finish()
                    await release.wait()
                }
            }
            for await _ in entered {}
            let started = ContinuousClock.now
            var attempts = 0
            var reached: UInt64?
            // Each attempt waits for the lock and gives up after the commit bound (5 s).
            while reached == nil, ContinuousClock.now - started < .seconds(60) {
                attempts += 1
                reached = try? await Self.commit(2, other)
            }
            let waited = ContinuousClock.now - started
            release.open()
            #expect(reached == 1, "the other node committed after \(attempts) attempts in \(waited)")
            await #expect(throws: (any Error).self, "the stalled node's commit failed") { try await stalledCommit.value }
            let (root, sequence) = try await other.loadWithSequence()
            #expect(sequence == 1 && root == Node.empty.updatingChild(at: TreePath(unchecked: "value"), to: Node(.number(2))),
                    "only the other node's commit is stored: sequence \(sequence), \(root)")
        } catch {
            failure = error
        }
        release.open()
        await stalledNode.shutdown()
        await otherNode.shutdown()
        if let failure { throw failure }
    }
}
}
