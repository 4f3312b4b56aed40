import Synchronization
import Testing
@testable import PostgresServerStore

/// A bounded transaction that ran out of time must not commit afterwards: its caller was told
/// nothing was written. No PostgreSQL needed: the work stands for a transaction.
@Suite("A bounded commit's deadline")
struct CommitGateTests {
    @Test("work that reaches its commit after the deadline rolls back, and the caller was told nothing was written")
    func lateCommitRollsBack() async throws {
        let release = Latch()
        let finished = Latch()
        let committed = Mutex(false)
        let gate = CommitGate()
        let error = await #expect(throws: PostgresStoreError.self) {
            try await PostgresStoreProvider.bounded("committing to namespace x", seconds: 1, gate: gate) {
                defer { finished.open() }
                await release.wait()
                try gate.enterCommit()
                committed.withLock { $0 = true }
            }
        }
        #expect(error?.code == .database && error?.mayHaveCommitted == false, "\(String(describing: error))")
        // Only now does the transaction reach its commit.
        release.open()
        await finished.wait()
        let wasCommitted = committed.withLock { $0 }
        #expect(!wasCommitted, "the late commit was refused")
    }

    @Test("a deadline that passes after the commit was sent says the outcome is unknown")
    func deadlineDuringCommitIsUnknown() async throws {
        let release = Latch()
        let gate = CommitGate()
        let error = await #expect(throws: PostgresStoreError.self) {
            try await PostgresStoreProvider.bounded("committing to namespace x", seconds: 1, gate: gate) {
                try gate.enterCommit()
                // The COMMIT's answer does not come.
                await release.wait()
            }
        }
        release.open()
        #expect(error?.code == .outcomeUnknown && error?.mayHaveCommitted == true, "\(String(describing: error))")
    }

    @Test("work that commits in time is not touched by the gate")
    func commitInTime() async throws {
        let gate = CommitGate()
        let value = try await PostgresStoreProvider.bounded("committing to namespace x", seconds: 30, gate: gate) {
            try gate.enterCommit()
            return 7
        }
        #expect(value == 7)
        #expect(!gate.abandon(), "the gate knows the commit was sent")
    }
}
