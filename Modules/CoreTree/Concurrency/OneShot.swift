import Synchronization

/// A result settled once, from any thread or task, and awaited by any number of tasks.
///
/// The first ``settle(_:)`` wins: it keeps the result and resumes every task waiting in
/// ``result()`` or ``value()``; a task that waits afterwards gets the result at once. Every later
/// settle is refused and says so by returning `false`, so the side that lost a race can undo what
/// it brought (close a connection it opened, give back a lease it took).
///
/// ```swift
/// let opened = OneShot<Connection, any Error>()
/// Task { opened.settle(Result { try await connect() }) }
/// Task { try? await clock.sleep(for: .seconds(5)); opened.fail(TimedOut()) }
/// let connection = try await opened.value()
/// ```
///
/// Waiting does not end when the waiting task is cancelled: to stop the waiters on
/// cancellation, settle from a cancellation handler (`withTaskCancellationHandler`), which also
/// tells the work that nobody waits any more.
package final class OneShot<Success: Sendable, Failure: Error>: Sendable {
    private struct State {
        var result: Result<Success, Failure>?
        var waiters: [CheckedContinuation<Result<Success, Failure>, Never>] = []
    }

    private let state = Mutex(State())

    /// An unsettled one-shot.
    package init() {}

    /// Settles with `result` and resumes every waiter, unless it is settled already.
    ///
    /// - Returns: `true` if this call settled it; `false` if an earlier call had (then `result`
    ///   is dropped and nothing changes).
    @discardableResult
    package func settle(_ result: Result<Success, Failure>) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Result<Success, Failure>, Never>]? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: result) }
        return true
    }

    /// Settles with `value`; `false` if it was settled already.
    @discardableResult
    package func succeed(_ value: Success) -> Bool { settle(.success(value)) }

    /// Settles with `error`; `false` if it was settled already.
    @discardableResult
    package func fail(_ error: Failure) -> Bool { settle(.failure(error)) }

    /// The result, once settled; `nil` before. Never waits.
    package var settled: Result<Success, Failure>? { state.withLock { $0.result } }

    /// Whether it is settled.
    package var isSettled: Bool { settled != nil }

    /// How many tasks are waiting now (for tests that must know a waiter arrived before settling).
    package var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Waits until settled (suspending, never blocking a thread) and returns the result.
    package func result() async -> Result<Success, Failure> {
        await withCheckedContinuation { continuation in
            let settled = state.withLock { state -> Result<Success, Failure>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let settled { continuation.resume(returning: settled) }
        }
    }

    /// Waits until settled and returns the value, or throws the error it was settled with.
    package func value() async throws(Failure) -> Success {
        try await result().get()
    }
}

extension OneShot where Success == Void {
    /// Settles with success; `false` if it was settled already.
    @discardableResult
    package func succeed() -> Bool { settle(.success(())) }
}
