import Foundation
import Persistence

/// Runs every selected workload on every backend and its raw engine, `runs` times, and reports
/// medians with min and max and each row's ratio to raw.
public enum BenchRunner {
    /// Runs `configuration`, calling `progress` before each step; the scratch directory is
    /// removed when the run ends, also when it fails.
    public static func run(_ configuration: BenchConfiguration, progress: (BenchProgress) -> Void = { _ in }) throws -> BenchReport {
        guard configuration.runs >= 1 else { throw BenchError("--runs must be at least 1", code: .invalidConfiguration) }
        guard !configuration.backends.isEmpty else { throw BenchError("no backend to measure; name at least one with --backends", code: .invalidConfiguration) }
        let scratch = try ScratchDirectory(inside: configuration.directory)
        defer { scratch.remove() }

        let workloads = Set(configuration.workloads)
        let queueWorkloads = [Workload.append, .append8].filter(workloads.contains)
        let runsCache = workloads.contains { $0.usesCache }
        let sides = configuration.backends.flatMap { backend in
            [Side(backend: backend, raw: false)] + (RawEngines.exists(for: backend.name) ? [Side(backend: backend, raw: true)] : [])
        }
        let stepsPerRun = 1 + sides.count * (queueWorkloads.count + (runsCache ? 1 : 0))
        var done = 0
        func step(_ run: Int, _ text: String) {
            progress(BenchProgress(done: done, total: stepsPerRun * configuration.runs, step: "run \(run)/\(configuration.runs) · \(text)"))
            done += 1
        }

        var samples = Samples()
        var footprints: [String: FootprintSamples] = [:]
        let cache = CacheWorkload(scale: configuration.scale)
        for run in 1...configuration.runs {
            step(run, "disk · \(Workload.diskFsync.rawValue)")
            samples.add(.diskFsync, "disk", try DiskWorkload.fsyncRate(directory: scratch.path, count: configuration.scale.appends))
            for side in sides {
                for workload in queueWorkloads {
                    step(run, "\(side.name) · \(workload.rawValue)")
                    let directory = try scratch.subdirectory("\(side.name)-\(workload.rawValue)")
                    let concurrent = workload == .append8
                    let rate = side.raw
                        ? try QueueWorkload.raw(side.backend.name, directory: directory, scale: configuration.scale, concurrent: concurrent)
                        : try QueueWorkload.ours(side.backend, directory: directory, scale: configuration.scale, concurrent: concurrent)
                    if let rate { samples.add(workload, side.name, rate) }
                    try FileManager.default.removeItem(atPath: directory)
                }
                guard runsCache else { continue }
                step(run, "\(side.name) · cache workloads")
                let directory = try scratch.subdirectory("\(side.name)-cache")
                let figures = side.raw
                    ? try cache.raw(side.backend.name, directory: directory)
                    : try cache.ours(side.backend, directory: directory)
                try FileManager.default.removeItem(atPath: directory)
                guard let figures else { continue }
                samples.add(.cacheOverwrite, side.name, figures.overwritesPerSecond)
                samples.add(.cacheMerge, side.name, figures.mergesPerSecond)
                samples.add(.subtreeRead, side.name, figures.readsPerSecond)
                samples.add(.coldOpen, side.name, figures.coldOpenMilliseconds)
                samples.add(.lruPrune, side.name, figures.pruneMilliseconds)
                footprints[side.backend.name, default: FootprintSamples()].add(figures, raw: side.raw)
            }
        }
        progress(BenchProgress(done: done, total: done, step: "done"))

        let order = [Workload.diskFsync] + Workload.allCases.filter { $0 != .diskFsync && $0 != .footprint && workloads.contains($0) }
        let names = ["disk"] + sides.map(\.name)
        let results = order.flatMap { workload in names.compactMap { samples.result(workload, $0) } }
        let footprint: [FootprintRow] = workloads.contains(.footprint)
            ? configuration.backends.compactMap { backend in
                footprints[backend.name]?.row(backend.name)
            }
            : []
        let machine = MachineInfo.current(directory: configuration.directory, runs: configuration.runs)
        return BenchReport(machine: machine, results: results, footprint: footprint)
    }

    /// One backend seen through our layers, or its raw engine.
    private struct Side {
        let backend: StorageBackend
        let raw: Bool
        var name: String { raw ? "\(backend.name)-raw" : backend.name }
    }

}

/// Every run's footprint figures of one backend.
struct FootprintSamples {
    private var logical: [Int64] = []
    private var disk: [Int64] = []
    private var rawDisk: [Int64] = []
    private var prunedLogical: [Int64] = []
    private var prunedDisk: [Int64] = []

    mutating func add(_ figures: CacheWorkload.Figures, raw: Bool) {
        if raw {
            rawDisk.append(figures.diskBytes)
        } else {
            logical.append(figures.logicalBytes)
            disk.append(figures.diskBytes)
            prunedLogical.append(figures.prunedLogicalBytes)
            prunedDisk.append(figures.prunedDiskBytes)
        }
    }

    /// The medians as a row, or `nil` when our side never ran.
    func row(_ backend: String) -> FootprintRow? {
        guard !disk.isEmpty else { return nil }
        return FootprintRow(
            backend: backend, logicalBytes: median(logical), diskBytes: median(disk), rawDiskBytes: rawDisk.isEmpty ? nil : median(rawDisk),
            logicalBytesAfterPrune: median(prunedLogical), diskBytesAfterPrune: median(prunedDisk))
    }

    private func median(_ values: [Int64]) -> Int64 { values.sorted()[values.count / 2] }
}

/// Every figure of every run, by workload and backend.
struct Samples {
    private var values: [Workload: [String: [Double]]] = [:]

    mutating func add(_ workload: Workload, _ backend: String, _ value: Double) {
        values[workload, default: [:]][backend, default: []].append(value)
    }

    /// The row for `workload` on `backend`: median, min, max, and the ratio to the raw engine's median.
    func result(_ workload: Workload, _ backend: String) -> BenchResult? {
        guard let figures = values[workload]?[backend], !figures.isEmpty else { return nil }
        let median = Samples.median(figures)
        var ratio: Double?
        if backend.hasSuffix("-raw") {
            ratio = 1
        } else if let raw = values[workload]?["\(backend)-raw"], !raw.isEmpty {
            let rawMedian = Samples.median(raw)
            // Cost per operation against the raw engine's: time ÷ time, or rate⁻¹ ÷ rate⁻¹.
            ratio = workload.higherIsBetter ? rawMedian / median : median / rawMedian
        }
        return BenchResult(
            workload: workload.rawValue, backend: backend, median: median, min: figures.min()!, max: figures.max()!,
            unit: workload.unit, ratioToRaw: ratio)
    }

    /// The middle value (the mean of the two middle ones for an even count).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
