import CoreTree
import Dispatch
import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import SyncProtocol
import Synchronization
import TestSupport
import Testing

/// The `async` API waits for the client's queue suspended, never blocking a thread of the
/// cooperative pool (which has as many threads as the machine has cores).
@Suite("async API")
struct AsyncAPITests {
    final class Counter: Sendable {
        private let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    @Test func asyncWritesSuspendWhileTheClientQueueIsBusy() async throws {
        let fake = FakeServer()
        fake.start { _, _ in (.ok, "\"\"") }
        defer { fake.stop() }
        let database = try Clients.make(url: "http://fake.invalid:1?ns=fake")
        database.transport = fake.transport
        defer { database.shutdown() }
        let ref = database.reference(withPath: "busy")

        // Hold the client's queue, as a slow durable write would.
        let entered = OneShot<Void, Never>()
        let release = DispatchSemaphore(value: 0)
        database.repo.enqueue {
            entered.succeed()
            release.wait()
        }
        await entered.value()
        // Were the writes below to block threads, the pool would starve and this test could not
        // go on: the valve then frees the queue, so the test fails instead of hanging.
        let valve = OneShot<Void, Never>()
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if valve.succeed() { release.signal() } }

        let writers = 64
        let started = Counter()
        let tasks = (0..<writers).map { index in
            Task {
                started.increment()
                return try await ref.child("w\(index)").setValue(index)
            }
        }
        while started.count < writers { await Task.yield() }
        #expect(await Task { "ran" }.value == "ran")
        let valveFired = !valve.succeed()
        #expect(!valveFired, "async writes blocked the cooperative pool while the client's queue was busy")
        if !valveFired { release.signal() }

        for task in tasks { _ = try await task.value }
        #expect(fake.requests.filter { $0.action == "p" }.count == writers)
    }

    /// The throwing single-event form stops, and stops listening, when its task is cancelled
    /// (offline with nothing cached, no event would ever come).
    @Test func aCancelledSingleEventThrowsAndStopsListening() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=cancel-once")
        database.goOffline()
        defer { database.shutdown() }
        let repo = database.repo
        let waiting = Task { try await database.reference(withPath: "never").singleEvent(of: .value) }
        #expect(try await waitUntil { repo.perform { !repo.observers.isEmpty } })
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await database.settle()
        #expect(repo.perform { repo.observers.isEmpty })

        // Cancelled before it starts: it throws at once and leaves nothing behind.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await database.reference(withPath: "never").singleEventAndPreviousSiblingKey(of: .childAdded)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        await database.settle()
        #expect(repo.perform { repo.observers.isEmpty })
    }
}
