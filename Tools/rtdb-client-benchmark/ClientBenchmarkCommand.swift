import ArgumentParser
import Foundation

/// `rtdb-client-benchmark`: local figures of the RealtimeDatabase client — write → event
/// latency, local write throughput per persistence backend, and the cold open of a persisted cache.
@main
struct ClientBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-client-benchmark",
        abstract: "Benchmarks of the RealtimeDatabase client: local latency, local writes/s, cold start of a persisted cache.",
        subcommands: [LatencyCommand.self, WritesCommand.self, ColdStartCommand.self, AllCommand.self, ColdOpenCommand.self, InspectCacheCommand.self])
}

/// Options every benchmark shares.
struct CommonOptions: ParsableArguments {
    @Option(help: "Seconds to wait for any one step before reporting it as a hang.")
    var timeout = 120

    var timeoutDuration: Duration { .seconds(timeout) }

    /// Prints the context every figure depends on.
    func printHeader() {
        ClientSetup.registerBackends()
        let info = ProcessInfo.processInfo
        Report.line("rtdb-client-benchmark: \(info.activeProcessorCount) cores, \(Format.bytes(Int64(info.physicalMemory))) RAM, "
            + "temporary directory \(NSTemporaryDirectory())")
        #if DEBUG
        Report.line("WARNING: a debug build; build with -c release for meaningful figures")
        #endif
    }
}

/// Parses a comma-separated list of stores (`off,sqlite,lmdb`).
func parseStores(_ text: String) throws -> [StoreKind] {
    try text.split(separator: ",").map { name in
        guard let store = StoreKind(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
            throw ValidationError("unknown store '\(name)'; use \(StoreKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return store
    }
}

/// `latency`: local write → local event latency per store.
struct LatencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency", abstract: "Local write → local .value event latency (offline client), p50/p99/max in µs.")

    @OptionGroup var common: CommonOptions
    @Option(name: .shortAndLong, help: "Measured writes per store.") var samples = 2_000
    @Option(help: "Unmeasured writes first.") var warmup = 200
    @Option(help: "Stores, comma-separated: off (persistence off), memory, sqlite, lmdb, leveldb.")
    var stores = "off,sqlite,lmdb,leveldb"

    func run() async throws {
        common.printHeader()
        _ = try await LatencyBenchmark(
            stores: try parseStores(stores), samples: samples, warmup: warmup, timeout: common.timeoutDuration
        ).run()
    }
}

/// `writes`: local writes/s per backend, and optionally acknowledged writes/s.
struct WritesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes", abstract: "Local writes/s with persistence on (offline client); optionally the server's acknowledgement of them.")

    @OptionGroup var common: CommonOptions
    @Option(name: .shortAndLong, help: "Writes per store.") var count = 100_000
    @Option(help: "Stores, comma-separated: off, memory, sqlite, lmdb, leveldb.") var stores = "memory,sqlite,lmdb,leveldb"
    @Option(help: "What observes the writes: child-added (one event per write), last (the last location only), none.")
    var observer = "child-added"
    @Flag(help: "Also time an in-process server's acknowledgement of --ack-count queued writes (a second client).")
    var online = false
    @Option(help: "Queued writes the server acknowledges per store with --online (the client's work per acknowledgement grows with the queue).")
    var ackCount = 5_000

    func run() async throws {
        common.printHeader()
        guard let observed = WritesObserver(rawValue: observer) else {
            throw ValidationError("--observer must be child-added, last or none")
        }
        _ = try await WritesBenchmark(
            stores: try parseStores(stores), count: count, observer: observed, ackCount: online ? ackCount : nil,
            timeout: common.timeoutDuration
        ).run()
    }
}

/// `coldstart`: cold open of a ~10 MB cache of 1,000 tracked queries.
struct ColdStartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coldstart", abstract: "Builds a ~10 MB cache of 1,000 tracked queries, then times cold opens to the first cached event.")

    @OptionGroup var common: CommonOptions
    @OptionGroup var options: ColdStartOptions

    func run() async throws {
        common.printHeader()
        _ = try await options.benchmark(timeout: common.timeoutDuration).run()
    }
}

/// The cold start's shape.
struct ColdStartOptions: ParsableArguments {
    @Option(help: "Backends for the cold start, comma-separated: sqlite, lmdb, leveldb.") var stores = "sqlite,lmdb,leveldb"
    @Option(help: "Locations (one tracked query each).") var locations = 1_000
    @Option(help: "Children per location.") var children = 10
    @Option(help: "Bytes per child string.") var childBytes = 1_000
    @Option(help: "The query per location: value (.value at the location) or last-5 (queryOrderedByKey().queryLimited(toLast: 5)).")
    var query: ColdQuery = .value
    @Option(help: "The cache budget in bytes (the default 10 MB would prune a ~10 MB cache).") var cacheBytes: UInt = 20_000_000
    @Option(help: "Cold opens in this process per backend.") var repeats = 5
    @Option(help: "Cold opens in fresh child processes per backend (0 for none).") var childRepeats = 5
    @Flag(help: "Keep each backend's cache directory (see the hidden inspect-cache subcommand).") var keepData = false

    func benchmark(timeout: Duration) throws -> ColdStartBenchmark {
        ColdStartBenchmark(
            stores: try parseStores(stores), locations: locations, childrenPerLocation: children, childBytes: childBytes, query: query,
            cacheBytes: cacheBytes, repeats: repeats, childRepeats: childRepeats, timeout: timeout, keepData: keepData)
    }
}
