import CoreTree
import Synchronization
import Testing
@testable import ServerCore

/// The commit pipeline on its own: groups, the durable version, undoing after a failure, and the
/// waiters for its end.
@Suite("Commit pipeline")
struct CommitPipelineTests {
    /// The writes whose completion was called, in order.
    private final class Outcomes: Sendable {
        let numbers = Mutex<[Int]>([])
    }

    private static func write(_ number: Int, outcomes: Outcomes) -> CommitPipeline.PendingWrite {
        CommitPipeline.PendingWrite(
            deliveries: [], writes: [StoreWrite(path: TreePath(unchecked: "w/\(number)"), node: Node(.number(Double(number))))], settings: [], version: UInt64(number), stamp: nil, value: Node(.number(Double(number))),
            completion: { _ in outcomes.numbers.withLock { $0.append(number) } })
    }

    @Test("Writes queued during a run form the next group; only one run at a time")
    func groups() {
        let outcomes = Outcomes()
        var pipeline = CommitPipeline(durableVersion: 0)
        let idleStart = pipeline.beginRun(hasWork: false)
        #expect(!idleStart, "no run without work")
        pipeline.enqueue(Self.write(1, outcomes: outcomes))
        let started = pipeline.beginRun(hasWork: pipeline.hasPending)
        #expect(started)
        let second = pipeline.beginRun(hasWork: true)
        #expect(!second, "a run is under way")
        let first = pipeline.takeGroup()
        pipeline.enqueue(Self.write(2, outcomes: outcomes))
        pipeline.enqueue(Self.write(3, outcomes: outcomes))
        #expect(first.map(\.value) == [Node(.number(1))])
        pipeline.committed(through: 1)
        #expect(pipeline.durableVersion == 1)
        let next = pipeline.takeGroup()
        #expect(next.map(\.value) == [Node(.number(2)), Node(.number(3))])
        #expect(!pipeline.hasPending)
    }

    @Test("A failed group takes every write queued after it along, and the durable version stays")
    func failure() {
        let outcomes = Outcomes()
        var pipeline = CommitPipeline(durableVersion: 7)
        pipeline.enqueue(Self.write(1, outcomes: outcomes))
        _ = pipeline.beginRun(hasWork: true)
        let group = pipeline.takeGroup()
        pipeline.enqueue(Self.write(2, outcomes: outcomes))
        let undone = pipeline.failed(group)
        #expect(undone.map(\.value) == [Node(.number(1)), Node(.number(2))])
        #expect(!pipeline.hasPending)
        #expect(pipeline.durableVersion == 7)
        for write in undone { write.completion(.failed(ServerError(.storageFailed, "disk full"))) }
        #expect(outcomes.numbers.withLock { $0 } == [1, 2])
    }

    @Test("Waiters for the end of a run are handed back when it ends, once")
    func idleWaiters() async {
        var pipeline = CommitPipeline(durableVersion: 0)
        _ = pipeline.beginRun(hasWork: true)
        var handedBack = 0
        await withCheckedContinuation { continuation in
            pipeline.waitUntilIdle(continuation)
            let waiters = pipeline.endRun()
            handedBack = waiters.count
            for waiter in waiters { waiter.resume() }
        }
        #expect(handedBack == 1)
        #expect(!pipeline.isRunning)
        let again = pipeline.endRun()
        #expect(again.isEmpty, "handed back once")
    }
}
