import CoreTree
import Persistence
import QueryEngine

/// The server-cache workloads, run in order on one store: build the cache (not timed), overwrite,
/// merge, read subtrees, close and measure the footprint, cold open to the first read, prune 20%
/// over budget, close and measure the footprint again. The raw engine runs the same sequence with the same rows.
struct CacheWorkload {
    let dataset: Dataset
    let scale: BenchScale

    init(scale: BenchScale) {
        self.scale = scale
        dataset = Dataset(locations: scale.locations)
    }

    /// What one run measured.
    struct Figures {
        var overwritesPerSecond = 0.0
        var mergesPerSecond = 0.0
        var readsPerSecond = 0.0
        var coldOpenMilliseconds = 0.0
        var pruneMilliseconds = 0.0
        /// The 10 MB cache after the writes and reads (store closed).
        var logicalBytes: Int64 = 0
        var diskBytes: Int64 = 0
        /// The same after the prune (store closed).
        var prunedLogicalBytes: Int64 = 0
        var prunedDiskBytes: Int64 = 0
    }

    /// The location the cold open reads.
    private var coldLocation: Int { scale.locations / 2 }

    /// The location the `k`-th read reads: beside the ones written, so reads see unchanged rows too.
    private func readLocation(_ k: Int) -> Int { (scale.location(ofOperation: k) + 1) % scale.locations }

    /// The locations the prune removes: the least recently used 20%.
    private var pruneVictims: Range<Int> { 0..<(scale.locations / 5) }

    /// The sequence through ``StorageEngine`` and ``PersistenceManager``, as the client uses them.
    func ours(_ backend: StorageBackend, directory: String) throws -> Figures {
        var figures = Figures()
        var engine = try StorageEngine(store: try backend.open(directory))
        do {
            for index in 0..<scale.locations {
                try engine.overwriteServerCache(at: dataset.path(index), with: dataset.location(index, version: 0))
                try engine.saveTrackedQuery(TrackedQuery(
                    id: Int64(index + 1), query: .default(at: dataset.path(index)), lastUse: Int64(index),
                    isComplete: true, isActive: false, isPinned: false))
            }
            // The data is made before the clock starts: only the engine's work is timed.
            let overwrites = (0..<scale.operations).map { k in
                let index = scale.location(ofOperation: k)
                return (dataset.path(index), dataset.location(index, version: 1))
            }
            figures.overwritesPerSecond = try rate {
                for (path, node) in overwrites { try engine.overwriteServerCache(at: path, with: node) }
            }
            let merges = (0..<scale.operations).map { k in
                let index = scale.location(ofOperation: k)
                return (dataset.messagesPath(index), dataset.mergeChildren(index, version: 1))
            }
            figures.mergesPerSecond = try rate {
                for (path, children) in merges { try engine.mergeServerCache(at: path, children: children) }
            }
            figures.readsPerSecond = try rate {
                for k in 0..<scale.operations {
                    let node = try engine.serverCache(at: dataset.path(readLocation(k)))
                    guard !node.isEmpty else { throw BenchError("\(backend.name): a cached location read back empty") }
                }
            }
            figures.logicalBytes = try logicalBytes(engine.store)
        } catch {
            try? engine.close()
            throw error
        }
        try engine.close()
        figures.diskBytes = DiskUsage(of: directory).allocatedBytes

        // The client's open: recovery check, tracked queries, then the first cached read.
        var manager: PersistenceManager?
        figures.coldOpenMilliseconds = try 1_000 * measureSeconds {
            let (opened, _) = try StoreRecovery.open(backend, directory: directory)
            engine = opened
            manager = try PersistenceManager(engine: opened, policy: .default)
            let (node, complete) = manager!.serverCache(for: .default(at: dataset.path(coldLocation)))
            guard complete, !node.isEmpty else { throw BenchError("\(backend.name): the cold read found no complete cached data") }
        }
        defer { try? engine.close() }
        guard let manager else { throw BenchError("\(backend.name): no persistence manager") }
        let budget = engine.cacheSizeBytes * 10 / 12
        var pruned = 0
        figures.pruneMilliseconds = try 1_000 * measureSeconds {
            pruned = try manager.pruneIfNeeded(by: .unchecked(maxBytes: budget))
        }
        guard pruned > 0, engine.cacheSizeBytes <= budget else {
            throw BenchError("\(backend.name): the prune left \(engine.cacheSizeBytes) bytes for a budget of \(budget) (\(pruned) queries pruned)")
        }
        figures.prunedLogicalBytes = try logicalBytes(engine.store)
        try engine.close()
        figures.prunedDiskBytes = DiskUsage(of: directory).allocatedBytes
        return figures
    }

    /// The same sequence with the same rows, straight through the C library; `nil` for a
    /// backend with no raw engine.
    func raw(_ name: String, directory: String) throws -> Figures? {
        guard var engine = try RawEngines.open(name, directory: directory) else { return nil }
        var figures = Figures()
        do {
            for index in 0..<scale.locations {
                try engine.write(replacing(dataset.path(index), with: dataset.location(index, version: 0)), durable: false)
            }
            // The rows are made before the clock starts: only the C library's work is timed.
            let overwrites = (0..<scale.operations).map { k in
                let index = scale.location(ofOperation: k)
                return replacing(dataset.path(index), with: dataset.location(index, version: 1))
            }
            figures.overwritesPerSecond = try rate {
                for batch in overwrites { try engine.write(batch, durable: false) }
            }
            let merges = (0..<scale.operations).map { k in
                let index = scale.location(ofOperation: k)
                var batch = WriteBatch()
                for child in dataset.mergeChildren(index, version: 1) {
                    batch.append(contentsOf: replacing(dataset.messagesPath(index).appending(child.path), with: child.node))
                }
                return batch
            }
            figures.mergesPerSecond = try rate {
                for batch in merges { try engine.write(batch, durable: false) }
            }
            figures.readsPerSecond = try rate {
                for k in 0..<scale.operations {
                    guard try engine.scan(StorageEngine.cacheRange(at: dataset.path(readLocation(k)))) > 0 else {
                        throw BenchError("\(name) (raw): a cached location read back empty")
                    }
                }
            }
        } catch {
            engine.close()
            throw error
        }
        engine.close()
        figures.diskBytes = DiskUsage(of: directory).allocatedBytes
        figures.coldOpenMilliseconds = try 1_000 * measureSeconds {
            guard let opened = try RawEngines.open(name, directory: directory) else { return }
            engine = opened
            guard try engine.scan(StorageEngine.cacheRange(at: dataset.path(coldLocation))) > 0 else {
                throw BenchError("\(name) (raw): the cold read found nothing")
            }
        }
        defer { engine.close() }
        figures.pruneMilliseconds = try 1_000 * measureSeconds {
            var batch = WriteBatch()
            for index in pruneVictims { batch.deleteRange(StorageEngine.cacheRange(at: dataset.path(index))) }
            try engine.write(batch, durable: false)
        }
        engine.close()
        figures.prunedDiskBytes = DiskUsage(of: directory).allocatedBytes
        return figures
    }

    /// A batch that replaces the rows at `path` with `node`'s: a range delete, then the puts.
    private func replacing(_ path: TreePath, with node: Node) -> WriteBatch {
        var batch = WriteBatch()
        batch.deleteRange(StorageEngine.cacheRange(at: path))
        for row in StorageEngine.cacheRows(of: node, at: path) { batch.put(row.key, row.value) }
        return batch
    }

    /// Operations per second of `body`, which runs ``BenchScale/operations`` of them.
    private func rate(_ body: () throws -> Void) throws -> Double {
        Double(scale.operations) / max(try measureSeconds(body), 1e-9)
    }

    /// Key plus value bytes of every row (values as stored before their checksums).
    private func logicalBytes(_ store: any OrderedKeyValueStore) throws -> Int64 {
        var total: Int64 = 0
        try store.scan(.all, reverse: false) { key, value in
            total += Int64(key.count + value.count)
            return true
        }
        return total
    }
}
