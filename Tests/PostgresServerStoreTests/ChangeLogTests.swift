import CoreTree
import Foundation
import Logging
import PostgresServerStore
import ServerCore
import Testing
import TestSupport

extension PostgresTests {
/// The change log at the store level: what a node that follows another one sees.
@Suite("PostgreSQL change log")
struct ChangeLogTests {
    @Test("a follower replays the leader's entries in order; once the log is trimmed past it, it is told to reload")
    func replayAndTrim() async throws {
        let url = try TestPostgres.url()
        let namespace = TestPostgres.freshNamespace("log")
        let leaderNode = try PostgresStoreProvider(url: url, logger: Logger(label: "test.leader"), logRetention: 100)
        let followerNode = try PostgresStoreProvider(url: url, logger: Logger(label: "test.follower"), logRetention: 100)
        var failure: (any Error)?
        do {
            let (leader, follower) = (
                try await leaderNode.openStore(namespace: namespace), try await followerNode.openStore(namespace: namespace))
            guard let leader = leader as? any SharedServerStore, let follower = follower as? any SharedServerStore else {
                throw SupportFailure("the PostgreSQL store is not a SharedServerStore")
            }
            var root = Node.empty
            var sequence: UInt64 = 0
            /// Commits `value` at `path` on the leader.
            func commit(_ value: Int, at path: TreePath) async throws {
                root = root.updatingChild(at: path, to: Node(.number(Double(value))))
                let change = StoreChange(root: root, changedPaths: [path])
                let write = WriteOperation.set(path: path, node: Node(.number(Double(value))))
                sequence = try await leader.commitExclusively(after: sequence) { _ in SharedCommit(change: change, writes: [write]) }
            }
            for index in 1...3 { try await commit(index, at: TreePath(unchecked: "items/i\(index)")) }
            #expect(sequence == 3)
            let entries = try #require(try await follower.changes(after: 1))
            #expect(entries.map(\.sequence) == [2, 3], "the entries after 1, in order")
            #expect(entries.first?.writes.first?.path == TreePath(unchecked: "items/i2"))

            // 1,000 more commits: the log keeps the last 100 entries, so a follower at 3 must reload.
            for index in 4...1003 { try await commit(index, at: TreePath(unchecked: "items/i\(index % 50)")) }
            #expect(try await follower.changes(after: 3) == nil, "trimmed past 3: reload")
            #expect(try await follower.changes(after: 990)?.count == 13, "recent entries are still there")
            let (reloaded, reloadedAt) = try await follower.loadWithSequence()
            #expect(reloadedAt == 1003)
            #expect(reloaded == root, "the reloaded tree is the leader's")
        } catch {
            failure = error
        }
        await leaderNode.shutdown()
        await followerNode.shutdown()
        if let failure { throw failure }
    }
}
}
