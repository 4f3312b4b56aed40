import Foundation

/// A one-shot event that listener blocks (on any thread) fire and one async task awaits, with
/// the instant it was fired; the first outcome wins.
final class Signal: @unchecked Sendable {
    private enum Outcome { case fired(ContinuousClock.Instant), expired }

    // `outcome` and `waiter` are guarded by `lock`.
    private let lock = NSLock()
    private var outcome: Outcome?
    private var waiter: CheckedContinuation<ContinuousClock.Instant?, Never>?

    /// Records `instant` (the first call wins) and wakes the waiter.
    func fire(at instant: ContinuousClock.Instant) { settle(.fired(instant)) }

    /// Gives up: the waiter gets `nil` (unless the signal already fired).
    func expire() { settle(.expired) }

    private func settle(_ result: Outcome) {
        let continuation: CheckedContinuation<ContinuousClock.Instant?, Never>? = lock.withLock {
            guard outcome == nil else { return nil }
            outcome = result
            defer { waiter = nil }
            return waiter
        }
        continuation?.resume(returning: Self.instant(result))
    }

    private static func instant(_ outcome: Outcome) -> ContinuousClock.Instant? {
        if case .fired(let instant) = outcome { return instant }
        return nil
    }

    /// When the signal fired, or `nil` if it expired. Only one task may wait.
    func wait() async -> ContinuousClock.Instant? {
        await withCheckedContinuation { continuation in
            let settled: Outcome? = lock.withLock {
                if let outcome { return outcome }
                waiter = continuation
                return nil
            }
            if let settled { continuation.resume(returning: Self.instant(settled)) }
        }
    }

    /// Waits for the signal, expiring it after `timeout` (a background timer; use
    /// ``Watchdog`` instead in tight measuring loops).
    func wait(timeout: Duration) async -> ContinuousClock.Instant? {
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { expire() }
        }
        defer { timer.cancel() }
        return await wait()
    }
}

/// Counts events from listener blocks and fires a ``Signal`` when `target` is reached.
final class EventCounter: @unchecked Sendable {
    // `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0
    let target: Int
    let reached = Signal()

    init(target: Int) { self.target = target }

    /// Counts one event (call from the listener block).
    func increment() {
        let now = ContinuousClock.now
        let hit = lock.withLock {
            count += 1
            return count == target
        }
        if hit { reached.fire(at: now) }
    }

    var current: Int { lock.withLock { count } }
}

/// Counts distinct keys from listener blocks and fires a ``Signal`` once `target` keys were seen.
final class KeyCounter: @unchecked Sendable {
    // `seen` is guarded by `lock`.
    private let lock = NSLock()
    private var seen = Set<String>()
    let target: Int
    let reached = Signal()

    init(target: Int) { self.target = target }

    /// Records `key` (call from the listener block).
    func saw(_ key: String) {
        let now = ContinuousClock.now
        let hit = lock.withLock { seen.insert(key).inserted && seen.count == target }
        if hit { reached.fire(at: now) }
    }

    var current: Int { lock.withLock { seen.count } }
}

/// Expires the signal being waited on when it has waited longer than `timeout`, so a hang in
/// the client ends one measurement with an error instead of the whole run; one timer task for
/// a whole measuring loop, checking four times a second.
final class Watchdog: @unchecked Sendable {
    // `current` is guarded by `lock`.
    private let lock = NSLock()
    private var current: (signal: Signal, deadline: ContinuousClock.Instant)?
    private var task: Task<Void, Never>?
    let timeout: Duration

    init(timeout: Duration) {
        self.timeout = timeout
        task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                self?.check()
            }
        }
    }

    deinit { task?.cancel() }

    /// Starts guarding `signal` from now.
    func guardSignal(_ signal: Signal) {
        let deadline = ContinuousClock.now + timeout
        lock.withLock { current = (signal, deadline) }
    }

    private func check() {
        let now = ContinuousClock.now
        let expired: Signal? = lock.withLock {
            guard let current, now > current.deadline else { return nil }
            self.current = nil
            return current.signal
        }
        expired?.expire()
    }

    /// Stops the timer.
    func stop() { task?.cancel() }
}

/// A benchmark step that did not finish in time: most likely a client hang worth reporting.
struct BenchmarkTimeout: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
