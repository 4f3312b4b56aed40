public import Persistence

/// What one `rtdb-bench` run measures.
public struct BenchConfiguration: Sendable {
    /// The backends to compare, in order.
    public var backends: [StorageBackend]
    /// The workloads to run (the disk's own limit always runs beside them).
    public var workloads: [Workload]
    /// How many times each workload runs; the report gives the median with min and max.
    public var runs: Int
    /// The directory on the disk to measure; the run works in a scratch directory inside it
    /// and leaves nothing behind.
    public var directory: String
    /// How much work each run does.
    public var scale: BenchScale

    /// A configuration.
    public init(backends: [StorageBackend], workloads: [Workload] = Workload.selectable, runs: Int = 5, directory: String, scale: BenchScale = .full) {
        self.backends = backends
        self.workloads = workloads
        self.runs = runs
        self.directory = directory
        self.scale = scale
    }
}

/// Where a run stands, for a progress line.
public struct BenchProgress: Sendable {
    /// Steps finished.
    public var done: Int
    /// Steps in all.
    public var total: Int
    /// What runs now, e.g. `run 2/5 · lmdb-raw · cache workloads`.
    public var step: String
}
