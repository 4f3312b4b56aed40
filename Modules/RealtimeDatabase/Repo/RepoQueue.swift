import Dispatch

/// The client's one serial domain: the dispatch queue every piece of the repo's state lives on,
/// and the checks that code touching that state runs there.
///
/// Synchronous public API calls enter with ``sync(_:)`` (re-entrant: a transaction block or a
/// listener that calls the API from inside the repo runs directly), so a write is durable and its
/// events are queued before the call returns. `async` API calls and questions from async code (a
/// listen's hash) enter with ``value(_:)``, which gives the same guarantee when it returns but
/// suspends the caller instead of blocking a thread of the cooperative pool. Reports from the
/// connection enter with ``async(_:)``, in the order they were made. State accessors call ``preconditionOnQueue()`` (as GRDB's
/// `SerializedDatabase` checks its queue), so a call from the wrong thread stops at once instead
/// of racing.
final class RepoQueue: Sendable {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<ObjectIdentifier>()

    /// A new serial queue named `label`.
    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: ObjectIdentifier(self))
    }

    /// Whether the caller runs on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }

    /// Stops the program when the caller is not on this queue.
    func preconditionOnQueue(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isCurrent, "The client's state was touched off its queue.", file: file, line: line)
    }

    /// Runs `body` on the queue and waits for it; runs it directly when already there.
    ///
    /// For synchronous public API calls only: never call it from `async` code.
    func sync<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        if isCurrent { return try body() }
        let result: Result<T, E> = queue.sync { Result { () throws(E) in try body() } }
        return try result.get()
    }

    /// Computes `body` on the queue, after everything queued before it, suspending the caller
    /// (never blocking its thread) until the result is ready, and rethrows what `body` throws.
    /// For every async caller: the async public API, the connection actor asking for a listen's
    /// hash. Never called from the queue itself (an async function never runs there).
    func value<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            queue.async { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Runs `body` on the queue later, after everything queued before it.
    func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
