import SyncProtocol
import Synchronization

/// A value set once from anywhere and awaited by one task; later attempts to set it are refused.
final class OneShotPromise<Value: Sendable>: Sendable {
    private enum State {
        case pending(CheckedContinuation<Value, any Error>?)
        case done(Result<Value, any Error>)
    }

    private let state = Mutex(State.pending(nil))

    init() {}

    /// Sets the outcome; returns false (and does nothing) when it was already set.
    @discardableResult
    func fulfill(_ result: Result<Value, any Error>) -> Bool {
        let outcome: (Bool, CheckedContinuation<Value, any Error>?) = state.withLock { state in
            guard case .pending(let waiter) = state else { return (false, nil) }
            state = .done(result)
            return (true, waiter)
        }
        outcome.1?.resume(with: result)
        return outcome.0
    }

    /// Waits for the outcome. Only one task may wait.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let done: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .done(let result): return result
                case .pending: state = .pending(continuation)
                    return nil
                }
            }
            if let done { continuation.resume(with: done) }
        }
    }
}
