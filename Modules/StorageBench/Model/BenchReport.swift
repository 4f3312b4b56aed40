/// Everything one `rtdb-bench` run found: the machine, the timed results and the footprints.
///
/// Encoded as JSON with snake_case keys:
/// `{"machine": {...}, "results": [{"workload", "backend", "median", "min", "max", "unit",
/// "ratio_to_raw"}], "footprint": [{"backend", "logical_bytes", "disk_bytes"}]}`.
public struct BenchReport: Sendable, Codable, Equatable {
    /// Where the figures were measured.
    public var machine: MachineInfo
    /// One row per workload and backend (raw engines are rows too, named `<backend>-raw`).
    public var results: [BenchResult]
    /// One row per backend whose footprint was measured.
    public var footprint: [FootprintRow]

    /// A report.
    public init(machine: MachineInfo, results: [BenchResult], footprint: [FootprintRow]) {
        self.machine = machine
        self.results = results
        self.footprint = footprint
    }

    /// The result of `workload` on `backend`, if measured.
    public func result(_ workload: Workload, _ backend: String) -> BenchResult? {
        results.first { $0.workload == workload.rawValue && $0.backend == backend }
    }
}

/// The figures of one workload on one backend over every run.
public struct BenchResult: Sendable, Codable, Equatable {
    /// The workload's name (``Workload/rawValue``).
    public var workload: String
    /// The backend's name; a raw engine is `<backend>-raw`, the disk itself `disk`.
    public var backend: String
    /// The median over the runs.
    public var median: Double
    /// The smallest figure of any run.
    public var min: Double
    /// The largest figure of any run.
    public var max: Double
    /// What the figures count (`writes/s`, `ms`, ...).
    public var unit: String
    /// Our cost over the raw engine's for the same work, from the medians: time per operation ÷ the
    /// raw engine's (1.0 = no overhead, above 1 slower, below 1 faster). `nil` when there is no
    /// raw engine to compare with.
    public var ratioToRaw: Double?

    enum CodingKeys: String, CodingKey {
        case workload, backend, median, min, max, unit
        case ratioToRaw = "ratio_to_raw"
    }

    /// A result row.
    public init(workload: String, backend: String, median: Double, min: Double, max: Double, unit: String, ratioToRaw: Double?) {
        self.workload = workload
        self.backend = backend
        self.median = median
        self.min = min
        self.max = max
        self.unit = unit
        self.ratioToRaw = ratioToRaw
    }

    /// A missing ratio is written as `null`, so every row has the key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(workload, forKey: .workload)
        try container.encode(backend, forKey: .backend)
        try container.encode(median, forKey: .median)
        try container.encode(min, forKey: .min)
        try container.encode(max, forKey: .max)
        try container.encode(unit, forKey: .unit)
        try container.encode(ratioToRaw, forKey: .ratioToRaw)
    }
}

/// A backend's bytes on disk after the 10 MB cache workloads (writes, overwrites, merges),
/// against the bytes it holds; and the same after the LRU prune, whose freed space an engine
/// keeps for reuse rather than returning it.
public struct FootprintRow: Sendable, Codable, Equatable {
    /// The backend's name.
    public var backend: String
    /// Key plus value bytes of every row in the store (no checksums, no engine overhead).
    public var logicalBytes: Int64
    /// Bytes the store's directory takes on disk (allocated blocks), with the store closed.
    public var diskBytes: Int64
    /// The same rows written straight through the C library, on disk, if measured.
    public var rawDiskBytes: Int64?
    /// ``logicalBytes`` after the prune.
    public var logicalBytesAfterPrune: Int64?
    /// ``diskBytes`` after the prune.
    public var diskBytesAfterPrune: Int64?

    enum CodingKeys: String, CodingKey {
        case backend
        case logicalBytes = "logical_bytes"
        case diskBytes = "disk_bytes"
        case rawDiskBytes = "raw_disk_bytes"
        case logicalBytesAfterPrune = "logical_bytes_after_prune"
        case diskBytesAfterPrune = "disk_bytes_after_prune"
    }

    /// A footprint row.
    public init(
        backend: String, logicalBytes: Int64, diskBytes: Int64, rawDiskBytes: Int64?,
        logicalBytesAfterPrune: Int64? = nil, diskBytesAfterPrune: Int64? = nil
    ) {
        self.backend = backend
        self.logicalBytes = logicalBytes
        self.diskBytes = diskBytes
        self.rawDiskBytes = rawDiskBytes
        self.logicalBytesAfterPrune = logicalBytesAfterPrune
        self.diskBytesAfterPrune = diskBytesAfterPrune
    }

    /// Disk bytes per logical byte.
    public var overhead: Double { logicalBytes > 0 ? Double(diskBytes) / Double(logicalBytes) : 0 }
}
