import Synchronization
import ServerCore

/// Messages waiting to go out to one client (a WebSocket connection or an event stream), with a
/// cap on the bytes waiting for it and a share of the server-wide ``OutboundBudget``.
///
/// Producers (the database, the request loop) never block: they append and return. When a slow
/// reader lets more than the cap pile up (or the server as a whole holds too much), the outbox
/// closes itself and reports overflow, and the client is dropped, so one slow client cannot make
/// the server hold unbounded memory. Once closed it accepts nothing more; what it still holds is
/// released with it.
///
/// The one writer takes everything waiting at once, in order, so it can send it together and
/// flush the socket once (a group commit acknowledges many of a connection's writes at the same
/// moment; a flush each was a system call each): an event stream's body awaits ``batches``; a
/// WebSocket's ``WebSocketOutboxWriter`` is told of each message (``onEnqueue(_:)``) and takes
/// them from its channel's event loop (``takeWaiting()``).
final class Outbox: Sendable {
    private struct State {
        var waiting: [String] = []
        var queuedBytes = 0
        var overflowed = false
        var finished = false
        /// Told of each message queued, instead of waking ``batches`` (a writer that sends from
        /// elsewhere, such as a channel's event loop).
        var onEnqueue: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// Wakes the writer when messages arrive; finished when the outbox closes.
    private let signal: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
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
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        budget.release(state.withLock { $0.queuedBytes })
    }

    /// Runs `body` once when the outbox closes (finished, overflowed, or its reader went away).
    func onTermination(_ body: @escaping @Sendable () -> Void) {
        signal.onTermination = { _ in body() }
    }

    /// Queues `message`; returns `false` when the outbox is closed (finished or overflowed).
    @discardableResult
    func enqueue(_ message: String) -> Bool {
        let size = message.utf8.count
        let (accepted, overflowedNow, onEnqueue) = state.withLock { state -> (Bool, Bool, (@Sendable () -> Void)?) in
            if state.finished { return (false, false, nil) }
            let overCap = state.queuedBytes > 0 && state.queuedBytes + size > maxQueuedBytes
            if overCap || !budget.reserve(size) {
                state.overflowed = true
                state.finished = true
                return (false, true, nil)
            }
            state.queuedBytes += size
            state.waiting.append(message)
            return (true, false, state.onEnqueue)
        }
        if accepted {
            if let onEnqueue { onEnqueue() } else { signal.yield() }
        } else {
            signal.finish()
            if overflowedNow { onOverflow() }
        }
        return accepted
    }

    /// The messages in order, in batches: each batch is everything queued since the writer last
    /// asked. Ends once the outbox is closed and drained. One writer only.
    var batches: Batches { Batches(outbox: self) }

    /// The batches of an outbox's messages, for its one writer.
    struct Batches: AsyncSequence {
        let outbox: Outbox

        func makeAsyncIterator() -> Iterator { Iterator(outbox: outbox, signals: outbox.signals.makeAsyncIterator()) }

        struct Iterator: AsyncIteratorProtocol {
            let outbox: Outbox
            var signals: AsyncStream<Void>.Iterator

            mutating func next() async -> [String]? {
                while true {
                    let (batch, finished) = outbox.takeWaiting()
                    if !batch.isEmpty { return batch }
                    if finished { return nil }
                    if await signals.next() == nil {
                        // Closed (or the writer was cancelled): what was queued before still goes.
                        let rest = outbox.takeWaiting().messages
                        return rest.isEmpty ? nil : rest
                    }
                }
            }
        }
    }

    /// Hands each message queued from now on to `body` (which takes them with
    /// ``takeWaiting()``) instead of to ``batches``; messages already waiting are handed over at once.
    func onEnqueue(_ body: @escaping @Sendable () -> Void) {
        let waiting = state.withLock { state in
            state.onEnqueue = body
            return !state.waiting.isEmpty
        }
        if waiting { body() }
    }

    /// Takes every message waiting, and whether the outbox is closed.
    func takeWaiting() -> (messages: [String], finished: Bool) {
        state.withLock { state in
            defer { state.waiting = [] }
            return (state.waiting, state.finished)
        }
    }

    /// Marks `messages` (a batch taken from ``batches`` or ``takeWaiting()``) as written.
    func didWrite(_ messages: [String]) {
        let size = messages.reduce(0) { $0 + $1.utf8.count }
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
        signal.finish()
    }
}
