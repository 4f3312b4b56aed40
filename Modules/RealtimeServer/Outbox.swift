import Synchronization

/// Messages waiting to go out on one connection, with a cap on the bytes waiting.
///
/// Producers (the database, the request loop) never block: they append and return. When a slow
/// reader lets more than the cap pile up, the outbox closes itself and reports overflow, and the
/// connection is dropped, so one slow client cannot make the server hold unbounded memory.
final class Outbox: Sendable {
    private struct State {
        var queuedBytes = 0
        var overflowed = false
        var finished = false
    }

    private let state = Mutex(State())
    private let continuation: AsyncStream<String>.Continuation
    /// The messages, in order, for the one writer.
    let messages: AsyncStream<String>
    private let maxQueuedBytes: Int
    private let onOverflow: @Sendable () -> Void

    /// An outbox holding at most `maxQueuedBytes`; `onOverflow` runs once when a message would
    /// pass that (it should drop the connection: the writer may be stuck behind the slow reader).
    init(maxQueuedBytes: Int, onOverflow: @escaping @Sendable () -> Void = {}) {
        self.maxQueuedBytes = maxQueuedBytes
        self.onOverflow = onOverflow
        (messages, continuation) = AsyncStream.makeStream(of: String.self)
    }

    /// Queues `message`; returns `false` when the outbox is closed (finished or overflowed).
    @discardableResult
    func enqueue(_ message: String) -> Bool {
        let size = message.utf8.count
        let (accepted, overflowedNow) = state.withLock { state -> (Bool, Bool) in
            if state.finished { return (false, false) }
            if state.queuedBytes + size > maxQueuedBytes && state.queuedBytes > 0 {
                state.overflowed = true
                state.finished = true
                return (false, true)
            }
            state.queuedBytes += size
            return (true, false)
        }
        if accepted {
            continuation.yield(message)
        } else {
            continuation.finish()
            if overflowedNow { onOverflow() }
        }
        return accepted
    }

    /// Marks `message` as written.
    func didWrite(_ message: String) {
        let size = message.utf8.count
        state.withLock { $0.queuedBytes -= size }
    }

    /// Whether the outbox closed because too much was waiting.
    var overflowed: Bool { state.withLock { $0.overflowed } }

    /// Bytes waiting.
    var queuedBytes: Int { state.withLock { $0.queuedBytes } }

    /// Closes the outbox; the writer drains what is queued and ends.
    func finish() {
        state.withLock { $0.finished = true }
        continuation.finish()
    }
}
