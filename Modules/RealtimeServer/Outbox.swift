import Synchronization

/// Messages waiting to go out to one client (a WebSocket connection or an event stream), with a
/// cap on the bytes waiting for it and a share of the server-wide ``OutboundBudget``.
///
/// Producers (the database, the request loop) never block: they append and return. When a slow
/// reader lets more than the cap pile up (or the server as a whole holds too much), the outbox
/// closes itself and reports overflow, and the client is dropped, so one slow client cannot make
/// the server hold unbounded memory. Once closed it accepts nothing more; what it still holds is
/// released with it.
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
    private let budget: OutboundBudget
    private let onOverflow: @Sendable () -> Void

    /// An outbox holding at most `maxQueuedBytes` of the server's `budget`; `onOverflow` runs once
    /// when a message would pass either (it should drop the client: the writer may be stuck
    /// behind the slow reader).
    init(maxQueuedBytes: Int, budget: OutboundBudget, onOverflow: @escaping @Sendable () -> Void = {}) {
        self.maxQueuedBytes = maxQueuedBytes
        self.budget = budget
        self.onOverflow = onOverflow
        (messages, continuation) = AsyncStream.makeStream(of: String.self)
    }

    deinit {
        budget.release(state.withLock { $0.queuedBytes })
    }

    /// Runs `body` once when the outbox closes (finished, overflowed, or its reader went away).
    func onTermination(_ body: @escaping @Sendable () -> Void) {
        continuation.onTermination = { _ in body() }
    }

    /// Queues `message`; returns `false` when the outbox is closed (finished or overflowed).
    @discardableResult
    func enqueue(_ message: String) -> Bool {
        let size = message.utf8.count
        let (accepted, overflowedNow) = state.withLock { state -> (Bool, Bool) in
            if state.finished { return (false, false) }
            let overCap = state.queuedBytes > 0 && state.queuedBytes + size > maxQueuedBytes
            if overCap || !budget.reserve(size) {
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
        budget.release(size)
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
