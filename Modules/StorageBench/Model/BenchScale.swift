/// How much work each run does. ``full`` is what the README reports; tests use ``tiny``.
public struct BenchScale: Sendable, Equatable {
    /// Cached locations of about 10 KB each (1,000 make the 10 MB cache).
    public var locations: Int
    /// Durable appends by the single writer per run.
    public var appends: Int
    /// Durable appends by each of the 8 concurrent writers per run.
    public var appendsPerWriter: Int
    /// Overwrites, merges and reads timed per run (at most ``locations``).
    public var operations: Int

    /// A scale.
    public init(locations: Int, appends: Int, appendsPerWriter: Int, operations: Int) {
        self.locations = locations
        self.appends = appends
        self.appendsPerWriter = appendsPerWriter
        self.operations = min(operations, locations)
    }

    /// The README's figures: a 10 MB cache of 1,000 locations.
    public static let full = BenchScale(locations: 1_000, appends: 1_000, appendsPerWriter: 125, operations: 300)

    /// A few of everything, for tests: every code path, no meaningful figures.
    public static let tiny = BenchScale(locations: 12, appends: 6, appendsPerWriter: 2, operations: 4)

    /// The concurrent writers of ``Workload/append8``.
    static let writers = 8

    /// The location the `k`-th timed operation works on: evenly spread, distinct.
    func location(ofOperation k: Int) -> Int { k * locations / max(1, operations) }
}
