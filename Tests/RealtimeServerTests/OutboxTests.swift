@testable import RealtimeServer
import ServerCore
import Synchronization
import Testing

/// The writer takes an outbox's messages in batches (everything queued since it last asked), in
/// order, with the caps and the closing rules of one message at a time.
@Suite("Outbox batches")
struct OutboxTests {
    @Test("Messages queued before the writer asks arrive as one batch, in order; later ones in the next")
    func batchesInOrder() async {
        let outbox = Outbox(maxQueuedBytes: 1_000, budget: OutboundBudget(limit: 10_000))
        var batches = outbox.batches.makeAsyncIterator()
        for text in ["a", "bb", "ccc"] { #expect(outbox.enqueue(text)) }
        #expect(await batches.next() == ["a", "bb", "ccc"])
        #expect(outbox.queuedBytes == 6, "bytes stay counted until written")
        outbox.didWrite(["a", "bb", "ccc"])
        #expect(outbox.queuedBytes == 0)
        outbox.enqueue("d")
        #expect(await batches.next() == ["d"])
    }

    @Test("A writer waiting on an empty outbox wakes for the next message")
    func waitsForMessages() async {
        let outbox = Outbox(maxQueuedBytes: 1_000, budget: OutboundBudget(limit: 10_000))
        let writer = Task { () -> [[String]] in
            var seen: [[String]] = []
            for await batch in outbox.batches { seen.append(batch) }
            return seen
        }
        outbox.enqueue("x")
        outbox.enqueue("y")
        outbox.finish()
        let seen = await writer.value
        #expect(seen.flatMap { $0 } == ["x", "y"], "what was queued before finish still goes out")
    }

    @Test("Overflow closes the outbox: the message past the cap is refused, the earlier ones drain, then the batches end")
    func overflowEnds() async {
        let overflowed = OverflowFlag()
        let outbox = Outbox(maxQueuedBytes: 5, budget: OutboundBudget(limit: 10_000)) { overflowed.set() }
        #expect(outbox.enqueue("1234"))
        #expect(!outbox.enqueue("5678"), "over the per-client cap")
        #expect(overflowed.value && outbox.overflowed)
        #expect(!outbox.enqueue("z"), "closed")
        var batches = outbox.batches.makeAsyncIterator()
        #expect(await batches.next() == ["1234"])
        #expect(await batches.next() == nil)
    }

    @Test("The server-wide budget is shared: what one outbox holds is released as it is written or dropped")
    func budgetReleased() async {
        let budget = OutboundBudget(limit: 8)
        var first: Outbox? = Outbox(maxQueuedBytes: 100, budget: budget)
        let second = Outbox(maxQueuedBytes: 100, budget: budget)
        #expect(first!.enqueue("123456"))
        #expect(!second.enqueue("1234"), "the budget holds 6 of 8 bytes")
        first = nil
        let third = Outbox(maxQueuedBytes: 100, budget: budget)
        #expect(third.enqueue("12345678"), "the dropped outbox gave its bytes back")
    }
    @Test("A writer that sends from elsewhere is told of each message queued, and of those already waiting, and takes them in order")
    func handOff() {
        let outbox = Outbox(maxQueuedBytes: 1_000, budget: OutboundBudget(limit: 10_000))
        outbox.enqueue("early")
        let told = OverflowFlag()
        outbox.onEnqueue { told.set() }
        #expect(told.value, "a message was already waiting")
        outbox.enqueue("late")
        let taken = outbox.takeWaiting()
        #expect(taken.messages == ["early", "late"] && !taken.finished)
        #expect(outbox.takeWaiting().messages.isEmpty)
        outbox.finish()
        #expect(outbox.takeWaiting().finished)
        #expect(!outbox.enqueue("after"), "closed")
    }
}

private final class OverflowFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var value: Bool { flag.withLock { $0 } }
}
