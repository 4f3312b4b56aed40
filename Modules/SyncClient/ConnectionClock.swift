/// The clock a ``PersistentConnection`` keeps time with: its reconnect backoff, connect timeout,
/// keep-alive and the length of a connection. Any `Clock` with `Duration` steps will do; tests
/// pass one they advance by hand, so nothing waits on the wall clock.
///
/// ```swift
/// var configuration = ConnectionConfiguration()
/// configuration.clock = ConnectionClock(ContinuousClock())  // the default
/// ```
public struct ConnectionClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// A connection clock reading `clock`.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
    }

    /// The system's monotonic clock.
    public static let continuous = ConnectionClock(ContinuousClock())

    /// The time since the clock was made: only differences between readings mean anything.
    public var now: Duration { elapsed() }

    /// Suspends for `duration` of this clock's time.
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(duration)
    }
}
