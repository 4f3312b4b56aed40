import CoreTree
import SyncProtocol
import Synchronization

/// A first-in first-out queue between tasks: ``push(_:)`` from anywhere, ``next(timeout:)`` waits
/// for an element. After ``finish()`` the buffered elements are still handed out, then nil.
final class AsyncQueue<Element: Sendable>: Sendable {
    /// No element arrived within the timeout.
    struct TimedOut: CodedError, CustomStringConvertible {
        var code: String { "timedOut" }
        var message: String { "timed out waiting for the next element" }
        var underlyingError: (any Error)? { nil }
        var description: String { message }
    }

    private struct State {
        var buffer: [Element] = []
        var head = 0
        var waiters: [Int: CheckedContinuation<Element?, any Error>] = [:]
        var waiterOrder: [Int] = []
        var abandoned: [Int: any Error] = [:]
        /// Waiters that have been numbered but not yet answered.
        var unanswered: Set<Int> = []
        var nextWaiter = 0
        var finished = false

        mutating func popFirst() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head > 64 && head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    private let state = Mutex(State())

    init() {}

    /// Adds an element, handing it to the longest waiting task if there is one. Ignored after ``finish()``.
    func push(_ element: Element) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            if state.finished { return nil }
            while let id = state.waiterOrder.first {
                state.waiterOrder.removeFirst()
                state.unanswered.remove(id)
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// Ends the queue: waiting tasks get nil, later calls get the buffered elements and then nil.
    func finish() {
        let waiters: [CheckedContinuation<Element?, any Error>] = state.withLock { state in
            state.finished = true
            let waiters = state.waiterOrder.compactMap { state.waiters[$0] }
            for id in state.waiterOrder { state.unanswered.remove(id) }
            state.waiters = [:]
            state.waiterOrder = []
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// Whether ``finish()`` was called.
    var isFinished: Bool { state.withLock { $0.finished } }

    /// The next element, or nil once the queue is finished and empty.
    ///
    /// - Throws: ``TimedOut`` after `timeout` (nil waits indefinitely), `CancellationError` when
    ///   the task is cancelled.
    func next(timeout: Duration? = nil) async throws -> Element? {
        let id = state.withLock { state in
            state.nextWaiter += 1
            state.unanswered.insert(state.nextWaiter)
            return state.nextWaiter
        }
        let timer = timeout.map { timeout in
            Task { [weak self] in
                try await Task.sleep(for: timeout)
                self?.abandon(id, error: TimedOut())
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let outcome: Result<Element?, any Error>? = state.withLock { state in
                    if let error = state.abandoned.removeValue(forKey: id) { return .failure(error) }
                    if let element = state.popFirst() {
                        state.unanswered.remove(id)
                        return .success(element)
                    }
                    if state.finished {
                        state.unanswered.remove(id)
                        return .success(nil)
                    }
                    state.waiters[id] = continuation
                    state.waiterOrder.append(id)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            abandon(id, error: CancellationError())
        }
    }

    /// Fails waiter `id` with `error`, or marks it so that it fails as soon as it waits.
    private func abandon(_ id: Int, error: any Error) {
        let waiter: CheckedContinuation<Element?, any Error>? = state.withLock { state in
            guard state.unanswered.remove(id) != nil else { return nil }
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            state.abandoned[id] = error
            return nil
        }
        waiter?.resume(throwing: error)
    }
}
