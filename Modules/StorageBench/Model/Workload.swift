/// One thing `rtdb-bench` measures, the same on every backend and on each raw engine.
public enum Workload: String, CaseIterable, Sendable, Codable {
    /// Durable write-queue appends by one writer (writes/s).
    case append
    /// Durable write-queue appends by 8 concurrent writers (writes/s).
    case append8 = "append-8"
    /// Replacing a cached location's tree, many small leaves and some 1 KB values (overwrites/s).
    case cacheOverwrite = "cache-overwrite"
    /// Merging four children into a cached location: two changed, one added, one removed (merges/s).
    case cacheMerge = "cache-merge"
    /// Reading a cached location's whole subtree (reads/s).
    case subtreeRead = "subtree-read"
    /// Opening a 10 MB cache with 1,000 tracked queries until the first cached read returns (ms).
    case coldOpen = "cold-open"
    /// Pruning a cache 20% over its budget, least recently used queries first (ms).
    case lruPrune = "lru-prune"
    /// Bytes on disk against logical bytes after the cache workloads (reported apart, no timing).
    case footprint
    /// 128-byte appends, each followed by `fdatasync`, on a plain file: the disk's own limit (writes/s).
    case diskFsync = "disk-fsync"

    /// What one figure counts.
    public var unit: String {
        switch self {
        case .append, .append8, .diskFsync: "writes/s"
        case .cacheOverwrite: "overwrites/s"
        case .cacheMerge: "merges/s"
        case .subtreeRead: "reads/s"
        case .coldOpen, .lruPrune: "ms"
        case .footprint: "bytes"
        }
    }

    /// Whether a larger figure is better (a rate) rather than worse (a time).
    public var higherIsBetter: Bool { unit.hasSuffix("/s") }

    /// One line saying what the workload does, for the table and the chart.
    public var summary: String {
        switch self {
        case .append: "durable write-queue appends, 1 writer"
        case .append8: "durable write-queue appends, 8 concurrent writers"
        case .cacheOverwrite: "server-cache overwrite of a ~10 KB location"
        case .cacheMerge: "server-cache merge of 4 children"
        case .subtreeRead: "read of a ~10 KB cached location"
        case .coldOpen: "cold open of a 10 MB cache, 1,000 tracked queries, to the first read"
        case .lruPrune: "LRU prune of a cache 20% over budget"
        case .footprint: "bytes on disk after the cache workloads"
        case .diskFsync: "128-byte write + fdatasync on a plain file (physical limit)"
        }
    }

    /// The workloads that need the cache built first.
    var usesCache: Bool {
        switch self {
        case .cacheOverwrite, .cacheMerge, .subtreeRead, .coldOpen, .lruPrune, .footprint: true
        case .append, .append8, .diskFsync: false
        }
    }

    /// The workloads a person can choose (the disk row always runs: it is the physical limit).
    public static var selectable: [Workload] { allCases.filter { $0 != .diskFsync } }
}
