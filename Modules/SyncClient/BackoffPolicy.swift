import SyncProtocol
/// The delays between reconnect attempts, as the Firebase SDKs compute them.
///
/// The base delay starts at ``minimumDelay`` and grows by ``multiplier`` after each failed attempt,
/// up to ``maximumDelay``. Each wait is `(1 - jitter) * base + jitter * base * random` with
/// `random` in `0..<1`. The first retry after a connection that lived at least
/// ``successfulConnectionDuration`` waits nothing, and the base starts over. See ``ReconnectBackoff``.
public struct BackoffPolicy: Sendable, Hashable {
    /// The first base delay.
    public var minimumDelay: Duration
    /// The largest base delay.
    public var maximumDelay: Duration
    /// How much the base delay grows after each failed attempt.
    public var multiplier: Double
    /// The random share of each delay, from 0 (none) to 1.
    public var jitter: Double
    /// How long a connection must have lived for the next retry to be immediate.
    public var successfulConnectionDuration: Duration

    /// Makes a policy; the defaults are the Firebase SDKs' (1 s to 30 s, ×1.3, jitter 0.7, 30 s).
    public init(
        minimumDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30), multiplier: Double = 1.3,
        jitter: Double = 0.7, successfulConnectionDuration: Duration = .seconds(30)
    ) {
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.jitter = jitter
        self.successfulConnectionDuration = successfulConnectionDuration
    }

    /// The base delay after `current`: ``minimumDelay`` when `current` is zero, else `current`
    /// times ``multiplier``, at most ``maximumDelay``.
    public func nextBase(after current: Duration) -> Duration {
        if current <= .zero { return minimumDelay }
        return min(.seconds(current.seconds * multiplier), maximumDelay)
    }

    /// The wait for base delay `base` and a random number `random` in `0..<1`.
    public func delay(base: Duration, random: Double) -> Duration {
        let seconds = base.seconds
        return .seconds((1 - jitter) * seconds + jitter * seconds * min(max(random, 0), 1))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
