/// The order in which operations on a namespace's data take their turns: a ticket per operation,
/// handed out when it arrives, and served one at a time in ticket order.
///
/// A namespace holds only part of its data in memory. An operation that finds what it needs
/// resident runs at once; one that must first load data from the store suspends while it loads,
/// and every later operation waits behind it, so writes are decided in the order they were
/// submitted and a read sees every write submitted before it. The memory an operation loaded
/// stays resident until its turn ends (eviction happens between turns).
struct TurnQueue {
    /// The next ticket to hand out.
    private var issued: UInt64 = 0
    /// The ticket whose turn it is (equal to ``issued`` when nobody has or waits for a turn).
    private var serving: UInt64 = 0
    /// Operations waiting for their turn, by ticket.
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]

    /// Whether nobody has a turn or waits for one.
    var isIdle: Bool { issued == serving }

    /// Hands out the next ticket.
    mutating func take() -> UInt64 {
        defer { issued += 1 }
        return issued
    }

    /// Whether it is `ticket`'s turn now.
    func isServing(_ ticket: UInt64) -> Bool { ticket == serving }

    /// Parks `ticket`'s operation until its turn comes (call only when it is not its turn).
    mutating func wait(_ ticket: UInt64, _ continuation: CheckedContinuation<Void, Never>) {
        waiters[ticket] = continuation
    }

    /// Ends the turn being served; returns the next operation to resume, if it is waiting already
    /// (one that has not parked yet finds its turn has come when it asks).
    mutating func finish() -> CheckedContinuation<Void, Never>? {
        serving += 1
        return waiters.removeValue(forKey: serving)
    }
}
