package import Logging
import Synchronization

/// Logs that a limit was reached, at most once a minute per limit, so an operator learns of it
/// without a flood of lines when clients keep pushing against it.
package final class LimitWarnings: Sendable {
    /// The limits that warn.
    package enum Limit: Hashable, Sendable {
        case connections
        case fileDescriptors
        case namespaces
    }

    private let logger: Logger
    private let lastWarned = Mutex<[Limit: ContinuousClock.Instant]>([:])
    private let interval: Duration

    package init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    /// Logs `message` as a warning unless `limit` warned within the interval.
    package func warn(_ limit: Limit, _ message: @autoclosure () -> String) {
        let now = ContinuousClock.now
        let due = lastWarned.withLock { last in
            if let previous = last[limit], previous.duration(to: now) < interval { return false }
            last[limit] = now
            return true
        }
        if due { logger.warning("\(message())") }
    }
}
