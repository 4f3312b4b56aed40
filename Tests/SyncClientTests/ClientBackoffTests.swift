import CoreTree
import Testing
@testable import SyncClient
import SyncProtocol
import TestSupport

@Suite("Client: backoff")
struct ClientBackoffTests {
    private func milliseconds(_ duration: Duration) -> Double { duration.seconds * 1_000 }
    private func isClose(_ duration: Duration, _ milliseconds: Double) -> Bool { abs(self.milliseconds(duration) - milliseconds) < 0.01 }

    @Test("With no jitter the base grows ×1.3 from the minimum to the cap")
    func growth() {
        var backoff = ReconnectBackoff(policy: BackoffPolicy())
        var delays: [Double] = []
        for _ in 0..<16 { delays.append(milliseconds(backoff.nextDelay(random: 1))) }
        let expected: [Double] = [1_000, 1_300, 1_690, 2_197, 2_856.1, 3_712.93, 4_826.809, 6_274.8517]
        for (delay, want) in zip(delays, expected) { #expect(abs(delay - want) < 0.01, "\(delay) vs \(want)") }
        #expect(abs(delays.last! - 30_000) < 0.01, "capped at the maximum")
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 + 0.01 })
        #expect(delays.filter { abs($0 - 30_000) < 0.01 }.count == 3, "1.3^13 > 30: the last three are capped")
    }

    @Test("Jitter keeps each delay between 30% and 100% of the base")
    func jitterBounds() {
        let policy = BackoffPolicy()
        #expect(isClose(policy.delay(base: .seconds(10), random: 0), 3_000))
        #expect(isClose(policy.delay(base: .seconds(10), random: 0.5), 6_500))
        #expect(isClose(policy.delay(base: .seconds(10), random: 1), 10_000))
        var low = ReconnectBackoff(policy: policy)
        var high = ReconnectBackoff(policy: policy)
        for _ in 0..<20 {
            let lower = low.nextDelay(random: 0)
            let upper = high.nextDelay(random: 0.999_999)
            #expect(milliseconds(lower) >= 0.3 * milliseconds(low.baseDelay) - 0.001)
            #expect(upper <= high.baseDelay && lower < upper)
        }
    }

    @Test("After a success the next delay is zero and the base starts over; useMaximumDelay jumps to the cap")
    func resetAndMaximum() {
        var backoff = ReconnectBackoff(policy: BackoffPolicy())
        _ = backoff.nextDelay(random: 1)
        _ = backoff.nextDelay(random: 1)
        backoff.signalSuccess()
        #expect(backoff.nextDelay(random: 1) == .zero)
        #expect(isClose(backoff.nextDelay(random: 1), 1_000))
        backoff.useMaximumDelay()
        #expect(isClose(backoff.nextDelay(random: 1), 30_000))
    }

    @Test("A connection that lived long enough reconnects at once; a short-lived one waits")
    func resetAfterLongConnection() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        let connection = startConnection(
            transport, delegate: RecordingDelegate(),
            configuration: fastConfiguration {
                $0.backoff = BackoffPolicy(
                    minimumDelay: .seconds(30), maximumDelay: .seconds(30), successfulConnectionDuration: .seconds(30))
                $0.keepAliveInterval = .seconds(3600)
                $0.clock = ConnectionClock(clock)
            })
        defer { connection.shutdown() }
        let first = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        clock.advance(by: .seconds(31))
        first.side.drop()
        // It lived 31 s: the reconnect is immediate, with no time passing.
        let second = try await FakeServer.connect(transport)
        #expect(await eventually { await connection.isConnected })
        second.side.drop()
        #expect(await eventually { await !connection.isConnected })
        // The second connection was short: the next attempt waits at least 9 s (30% of 30 s).
        #expect(await eventually { clock.sleeperCount == 1 }, "the retry waits on the clock")
        clock.advance(by: .seconds(8))
        #expect(await transport.expectNoConnection(within: .milliseconds(100)))
        #expect(transport.connectAttempts == 2)
        clock.advance(by: .seconds(22))
        _ = try await FakeServer.connect(transport)
        #expect(transport.connectAttempts == 3, "and at most 30 s")
    }
}
