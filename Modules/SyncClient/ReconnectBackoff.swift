import SyncProtocol
/// The reconnect delay state of one connection (Android's `RetryHelper`), following a ``BackoffPolicy``.
public struct ReconnectBackoff: Sendable {
    /// The policy followed.
    public let policy: BackoffPolicy
    /// The current base delay; zero before the first failure and after a success.
    public private(set) var baseDelay: Duration = .zero
    private var lastWasSuccess = false

    /// Starts with no failures.
    public init(policy: BackoffPolicy) {
        self.policy = policy
    }

    /// The wait before the next attempt, given a random number in `0..<1`. Zero right after
    /// ``signalSuccess()``; otherwise the base delay grows first, then is jittered.
    public mutating func nextDelay(random: Double) -> Duration {
        if lastWasSuccess {
            lastWasSuccess = false
            return .zero
        }
        baseDelay = policy.nextBase(after: baseDelay)
        return policy.delay(base: baseDelay, random: random)
    }

    /// The last connection succeeded (lived long enough, or the server asked for a reconnect):
    /// the next retry is immediate and the base delay starts over.
    public mutating func signalSuccess() {
        lastWasSuccess = true
        baseDelay = .zero
    }

    /// Makes the next delays the longest (after repeated invalid tokens).
    public mutating func useMaximumDelay() {
        lastWasSuccess = false
        baseDelay = policy.maximumDelay
    }
}
