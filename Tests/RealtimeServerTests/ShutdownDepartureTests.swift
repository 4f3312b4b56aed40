@testable import RealtimeServer
import Synchronization
import TestSupport
import Testing

/// A connection the shutdown did not know about when it began (accepted from the backlog after
/// it) is still asked to go and cut off: it must not hold the stop until its own timeouts.
@Suite("Shutdown departures")
struct ShutdownDepartureTests {
    @Test("A connection registered after shutdown began is asked to go at once, and cut off with the rest")
    func registeredWhileAsking() async throws {
        let activity = ServerActivity(maxQueuedBytesTotal: 1 << 20)
        let calls = Mutex<[String]>([])
        // A connection the shutdown waits for keeps it in its asking stage.
        _ = activity.connectionOpened()
        _ = activity.onShutdown(polite: { calls.withLock { $0.append("early polite") } }, force: { calls.withLock { $0.append("early force") } })
        activity.beginShutdown(deadline: .seconds(3600))
        #expect(calls.withLock { $0 } == ["early polite"])
        let late = activity.onShutdown(polite: { calls.withLock { $0.append("late polite") } }, force: { calls.withLock { $0.append("late force") } })
        #expect(calls.withLock { $0 } == ["early polite", "late polite"], "asked at once, not cut off yet")
        // The last counted connection closes: the shutdown cuts off what is left.
        activity.connectionClosed()
        #expect(try await waitUntil(timeout: .seconds(60)) { calls.withLock { $0.count } == 4 })
        #expect(Set(calls.withLock { $0 }.suffix(2)) == ["early force", "late force"])
        activity.withdraw(late)
    }

    @Test("A connection registered after the cut-off is asked to go and cut off at once")
    func registeredAfterCutOff() async throws {
        let activity = ServerActivity(maxQueuedBytesTotal: 1 << 20)
        let cut = Mutex(false)
        // The barrier: this connection's cut-off shows the shutdown reached its last stage.
        _ = activity.onShutdown(force: { cut.withLock { $0 = true } })
        activity.beginShutdown(deadline: .zero)
        #expect(try await waitUntil(timeout: .seconds(60)) { cut.withLock { $0 } })
        let calls = Mutex<[String]>([])
        _ = activity.onShutdown(polite: { calls.withLock { $0.append("polite") } }, force: { calls.withLock { $0.append("force") } })
        #expect(calls.withLock { $0 } == ["polite", "force"])
    }
}
