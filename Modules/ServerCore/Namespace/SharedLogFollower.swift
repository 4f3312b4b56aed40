/// Where a namespace that several nodes share stands in its change log, and what it waits to
/// commit there: the last entry its tree includes, the writes waiting for the next exclusive
/// commit, whether another node committed meanwhile (catch up), and the writes decided in the
/// commit in flight. The namespace drives it (``NamespaceDatabase/runSharedCommits(_:)``).
struct SharedLogFollower<Waiting, Decided> {
    /// The last change-log entry the tree in memory includes.
    private(set) var sequence: UInt64
    private var waiting: [Waiting] = []
    private var catchUpWanted = false
    private var inFlight: [Decided] = []

    /// A follower whose tree includes the log up to `sequence`.
    init(at sequence: UInt64) { self.sequence = sequence }

    /// Whether a commit or a catch-up is due.
    var hasWork: Bool { !waiting.isEmpty || catchUpWanted }

    /// Queues a write for the next exclusive commit.
    mutating func enqueue(_ write: Waiting) { waiting.append(write) }

    /// Notes that another node may have committed.
    mutating func wantCatchUp() { catchUpWanted = true }

    /// What is due next: the waiting writes as one group (the catch-up happens under the same
    /// lock), or `nil` for a catch-up alone. Either way the catch-up wish is taken.
    mutating func next() -> [Waiting]? {
        catchUpWanted = false
        guard !waiting.isEmpty else { return nil }
        defer {
            waiting = []
            inFlight = []
        }
        return waiting
    }

    /// Records a write decided in the commit in flight.
    mutating func decided(_ write: Decided) { inFlight.append(write) }

    /// Hands out the writes decided in the commit in flight (it committed or failed).
    mutating func takeDecided() -> [Decided] {
        defer { inFlight = [] }
        return inFlight
    }

    /// Records that the tree now includes the log up to `sequence`.
    mutating func reached(_ sequence: UInt64) { self.sequence = sequence }
}
