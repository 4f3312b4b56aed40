import Foundation
import RealtimeDatabase
import StorageBench

/// The figures of one backend's cold start.
struct ColdStartResult: Sendable {
    let store: StoreKind
    /// Building the cache: from the first listen to every location's value having arrived.
    let buildSeconds: Double
    /// The persistence directory after the build client shut down.
    let diskUsage: DiskUsage
    /// Cold opens in this process (the build's process, its caches warm).
    let inProcess: [ColdOpen.Timing]
    /// Cold opens in fresh child processes.
    let child: [ColdOpen.Timing]
    /// The child processes' lifetimes, spawn to exit, seen from the parent (µs).
    let childWall: [Double]
}

/// `coldstart`: builds a ~10 MB cache of `locations` tracked queries per backend (through an
/// in-process server), then times cold opens of it: a new offline client on the directory, until
/// the first cached `.value` event.
///
/// The cache budget is raised to `cacheBytes` (20 MB by default) so that nothing is pruned while
/// building; 1,000 inactive queries is exactly Firebase's (and this client's) prunable-query
/// limit, so more locations would be pruned down on the next check.
struct ColdStartBenchmark {
    let stores: [StoreKind]
    let locations: Int
    let childrenPerLocation: Int
    let childBytes: Int
    let query: ColdQuery
    let cacheBytes: UInt
    let repeats: Int
    let childRepeats: Int
    let timeout: Duration
    /// Keep each backend's cache directory (and print where) instead of removing it.
    var keepData = false

    func run() async throws -> [ColdStartResult] {
        let megabytes = Double(locations * childrenPerLocation * childBytes) / 1_000_000
        Report.line("== coldstart: \(locations) locations × \(childrenPerLocation) children × \(childBytes) B"
            + " (~\(Format.number(megabytes, digits: 1)) MB), one \(query.rawValue) query each; cache budget \(Format.bytes(Int64(cacheBytes)))")
        let server = try await InProcessServer.start()
        var results: [ColdStartResult] = []
        do {
            let url = server.url(namespace: "coldstart")
            try await builder.writeData(url: url)
            for store in stores {
                results.append(try await measure(store, url: url))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        Self.printTable(results)
        return results
    }

    private func measure(_ store: StoreKind, url: String) async throws -> ColdStartResult {
        let scratch = try ScratchDirectory("coldstart-\(store.rawValue)")
        let directory = scratch.sub("store")
        defer {
            if keepData { Report.line("  kept the \(store.label) cache in \(directory)") } else { scratch.remove() }
        }
        let buildSeconds = try await builder.buildCache(store, url: url, directory: directory)
        let usage = DiskUsage(of: directory)
        Report.line("  \(Format.pad(store.label, 8, left: true)) built in \(Format.number(buildSeconds, digits: 2)) s, disk \(usage.text)")

        var inProcess: [ColdOpen.Timing] = []
        for attempt in 0..<repeats {
            let timing = try await ColdOpen.measure(
                url: url, store: store, directory: directory, path: path(attempt), query: query, cacheBytes: cacheBytes,
                timeout: timeout)
            try check(timing, store: store)
            inProcess.append(timing)
        }
        var child: [ColdOpen.Timing] = []
        var wall: [Double] = []
        for attempt in 0..<childRepeats {
            let outcome = try await ChildProcess.run([
                "cold-open", "--url", url, "--store", store.rawValue, "--directory", directory,
                "--path", path(repeats + attempt), "--query", query.rawValue, "--cache-bytes", "\(cacheBytes)",
            ])
            guard outcome.status == 0, let line = outcome.output.split(separator: "\n").last,
                  let timing = ColdOpen.Timing(line: String(line)) else {
                throw BenchmarkTimeout("cold open (\(store.label)) in a child process failed (status \(outcome.status)): "
                    + outcome.output + outcome.errorOutput)
            }
            try check(timing, store: store)
            child.append(timing)
            wall.append(outcome.wallMicros)
        }
        let result = ColdStartResult(
            store: store, buildSeconds: buildSeconds, diskUsage: usage, inProcess: inProcess, child: child, childWall: wall)
        Report.line("  \(Format.pad(store.label, 8, left: true)) in-process first event min \(Format.millis(Self.firstEvents(inProcess).min)) ms"
            + "  median \(Format.millis(Self.firstEvents(inProcess).median)) ms"
            + (child.isEmpty ? "" : "  | child process min \(Format.millis(Self.firstEvents(child).min)) ms"
                + "  median \(Format.millis(Self.firstEvents(child).median)) ms"
                + "  (process spawn→exit median \(Format.millis(Percentiles(wall).median)) ms)"))
        return result
    }

    private var builder: CacheBuilder {
        CacheBuilder(
            locations: locations, childrenPerLocation: childrenPerLocation, childBytes: childBytes, query: query,
            cacheBytes: cacheBytes, timeout: timeout)
    }

    /// A different location for each attempt, spread over the range.
    private func path(_ attempt: Int) -> String {
        "data/q\((attempt * 397 + 11) % locations)"
    }

    private func check(_ timing: ColdOpen.Timing, store: StoreKind) throws {
        let expected = query.expectedChildren(of: childrenPerLocation)
        guard timing.children == expected else {
            throw BenchmarkTimeout("cold open (\(store.label)): the cached value had \(timing.children) children, not \(expected)")
        }
    }

    static func firstEvents(_ timings: [ColdOpen.Timing]) -> Percentiles {
        Percentiles(timings.map(\.firstEventMicros))
    }

    static func printTable(_ results: [ColdStartResult]) {
        var table = Table([
            "backend", "build s", "disk", "open min ms", "1st event min ms", "median ms", "child 1st event min ms", "median ms",
            "child spawn→exit ms", "< 100 ms",
        ])
        for result in results {
            let open = Percentiles(result.inProcess.map(\.openMicros))
            let inProcess = firstEvents(result.inProcess)
            let child = firstEvents(result.child)
            let worst = max(inProcess.median, result.child.isEmpty ? 0 : child.median)
            table.add([
                result.store.label, Format.number(result.buildSeconds, digits: 2), Format.bytes(result.diskUsage.apparentBytes),
                Format.millis(open.min), Format.millis(inProcess.min), Format.millis(inProcess.median),
                result.child.isEmpty ? "-" : Format.millis(child.min), result.child.isEmpty ? "-" : Format.millis(child.median),
                result.childWall.isEmpty ? "-" : Format.millis(Percentiles(result.childWall).median),
                worst < 100_000 ? "yes" : "NO",
            ])
        }
        table.print()
    }
}
