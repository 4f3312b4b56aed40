import Synchronization

/// A flag that exactly one caller can claim.
final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// True for the first caller only.
    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}

/// A one-shot broadcast: tasks wait until it opens and all receive the same value.
///
/// Waiting is cancellable: a cancelled waiter gets nil.
final class Gate<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [Int: CheckedContinuation<Value?, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Opens the gate with `value` (only the first call counts).
    func open(_ value: Value) {
        let waiters: [Int: CheckedContinuation<Value?, Never>] = state.withLock { state in
            guard state.value == nil else { return [:] }
            state.value = value
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume(returning: value) }
    }

    /// The value once open, without waiting.
    var value: Value? { state.withLock { $0.value } }

    /// Waits until the gate opens; nil if the task is cancelled first.
    func wait() async -> Value? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let immediate: Value?? = state.withLock { state in
                    if let value = state.value { return .some(value) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}

/// Counts arrivals (successful or not) and opens a gate when all expected have arrived.
final class Countdown: Sendable {
    private let expected: Int
    private let counts = Mutex((succeeded: 0, failed: 0))
    /// Opens with the number that succeeded once all have arrived.
    let done = Gate<Int>()

    init(expected: Int) {
        self.expected = expected
        if expected == 0 { done.open(0) }
    }

    func arrive(succeeded: Bool) {
        let finished: Int? = counts.withLock { counts in
            if succeeded { counts.succeeded += 1 } else { counts.failed += 1 }
            return counts.succeeded + counts.failed == expected ? counts.succeeded : nil
        }
        if let finished { done.open(finished) }
    }

    var succeeded: Int { counts.withLock { $0.succeeded } }
    var failed: Int { counts.withLock { $0.failed } }
}

/// A counting semaphore for async code (FIFO), used to bound connection attempts in progress.
final class AsyncSemaphore: Sendable {
    private struct State {
        var permits: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0
    }

    private let state: Mutex<State>

    init(permits: Int) {
        state = Mutex(State(permits: permits))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                if state.permits > 0 {
                    state.permits -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard state.head < state.waiters.count else {
                state.permits += 1
                return nil
            }
            let waiter = state.waiters[state.head]
            state.head += 1
            if state.head > 1024 && state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return waiter
        }
        waiter?.resume()
    }
}

/// One client's progress through its start: the connection slot it holds until its handshake
/// arrives, and its arrival at the countdown once ready (or failed). Each happens once.
final class ClientStart: Sendable {
    private let slots: AsyncSemaphore
    private let countdown: Countdown
    private let slotReleased = OnceFlag()
    private let arrived = OnceFlag()

    init(slots: AsyncSemaphore, countdown: Countdown) {
        self.slots = slots
        self.countdown = countdown
    }

    /// The handshake arrived (or the attempt failed): frees the connection slot.
    func connected() {
        if slotReleased.claim() { slots.release() }
    }

    /// The client is ready for the benchmark, or gave up.
    func ready(_ succeeded: Bool) {
        connected()
        if arrived.claim() { countdown.arrive(succeeded: succeeded) }
    }
}

/// Counts errors by description, for the report.
final class ErrorTally: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func record(_ error: any Error) { record(String(describing: error)) }

    func record(_ description: String) {
        counts.withLock { $0[String(description.prefix(300)), default: 0] += 1 }
    }

    var total: Int { counts.withLock { $0.values.reduce(0, +) } }

    /// Prints the tally, most frequent first.
    func report(_ heading: String) {
        let entries = counts.withLock { $0 }.sorted { $0.value > $1.value }
        guard !entries.isEmpty else { return }
        Report.line("\(heading): \(Format.count(entries.reduce(0) { $0 + $1.value }))")
        for (description, count) in entries.prefix(8) {
            Report.line("  \(Format.count(count))× \(description)")
        }
    }
}

/// A shared counter for progress lines.
final class ProgressCounter: Sendable {
    private let value = Atomic<Int>(0)

    func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }

    var current: Int { value.load(ordering: .relaxed) }
}
