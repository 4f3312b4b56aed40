import Synchronization
import ServerCore

/// The server-wide cap on bytes queued for clients, shared by every ``Outbox``.
///
/// Each outbox has its own cap too; this one bounds the sum, so many slow clients together cannot
/// exhaust memory. A reservation that would pass the cap fails, and the outbox asking drops its
/// client. A first message is always admitted when nothing at all is queued, so a single message
/// larger than the cap still goes out.
public final class OutboundBudget: Sendable {
    private let queued = Atomic<Int>(0)
    /// The most bytes all clients together may have waiting.
    public let limit: Int

    /// A budget of `limit` bytes.
    public init(limit: Int) { self.limit = limit }

    /// Bytes queued for all clients now.
    public var queuedBytes: Int { queued.load(ordering: .relaxed) }

    /// Takes `bytes` from the budget; `false` (taking nothing) when that would pass the limit.
    func reserve(_ bytes: Int) -> Bool {
        var current = queued.load(ordering: .relaxed)
        while true {
            if current > 0 && current + bytes > limit { return false }
            let (exchanged, original) = queued.compareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives `bytes` back.
    func release(_ bytes: Int) {
        guard bytes != 0 else { return }
        queued.subtract(bytes, ordering: .relaxed)
    }
}
