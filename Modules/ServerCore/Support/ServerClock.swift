public import Foundation

/// The clock a server keeps time with: the wall-clock time it stamps (server timestamps, push
/// ids, the rules' `now`, token expiry) and the sleeps of its own timers (token expiry on open
/// connections, the orphaned-onDisconnect sweep, namespace-open and event-stream keep-alive waits).
///
/// The default reads the system clock. Tests pass one made from a clock they advance by hand, so
/// a token expires or a sweep runs when the test says, not after a wait on the wall clock:
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.clock = ServerClock(manualClock, wallClockAtStart: Date())
/// ```
///
/// Timers that live in SwiftNIO's event loops (WebSocket pings, header, body and idle timeouts)
/// are kernel timers on the channel and keep real time.
public struct ServerClock: Sendable {
    private let wallMilliseconds: @Sendable () -> Int64
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// A server clock whose time starts at `wallClockAtStart` and moves as `clock` does.
    public init<C: Clock>(_ clock: C, wallClockAtStart: Date) where C.Duration == Duration {
        let origin = clock.now
        let start = wallClockAtStart.timeIntervalSince1970
        wallMilliseconds = {
            let elapsed = origin.duration(to: clock.now)
            let seconds = start + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return Int64((seconds * 1000).rounded())
        }
        sleeper = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
    }

    private init(wallMilliseconds: @escaping @Sendable () -> Int64, sleeper: @escaping @Sendable (Duration) async throws -> Void) {
        self.wallMilliseconds = wallMilliseconds
        self.sleeper = sleeper
    }

    /// The system's wall clock for time stamps, its monotonic clock for sleeps.
    public static let system = ServerClock(
        wallMilliseconds: { Int64((Date().timeIntervalSince1970 * 1000).rounded()) },
        sleeper: { duration in try await Task.sleep(for: duration) })

    /// Milliseconds since the Unix epoch, rounded to the nearest.
    public func milliseconds() -> Int64 { wallMilliseconds() }

    /// The time now as a `Date`.
    public func date() -> Date { Date(timeIntervalSince1970: Double(wallMilliseconds()) / 1000) }

    /// Suspends for `duration` of this clock's time.
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(duration)
    }

    /// Suspends until the wall-clock time `date` (returns at once when it has passed).
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(until date: Date) async throws {
        let remaining = Int64((date.timeIntervalSince1970 * 1000).rounded(.up)) - milliseconds()
        if remaining > 0 { try await sleep(for: .milliseconds(remaining)) }
    }
}
