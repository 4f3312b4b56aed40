import ArgumentParser
import Foundation

/// `all`: every benchmark with modest defaults, then one compact summary.
struct AllCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all", abstract: "Runs latency, writes (with the online acknowledgement) and coldstart, then prints a summary.")

    @OptionGroup var common: CommonOptions
    @Option(help: "Measured writes per store for latency.") var latencySamples = 2_000
    @Option(help: "Writes per store for writes.") var writes = 100_000
    @Option(help: "Queued writes per store the in-process server acknowledges (0 to skip).") var ackCount = 5_000
    @OptionGroup var coldStart: ColdStartOptions

    func run() async throws {
        common.printHeader()
        let clock = ContinuousClock()
        let start = clock.now
        let latency = try await LatencyBenchmark(
            stores: [.off, .memory, .sqlite, .lmdb, .leveldb], samples: latencySamples, warmup: 200, timeout: common.timeoutDuration
        ).run()
        Report.line()
        let writes = try await WritesBenchmark(
            stores: [.memory, .sqlite, .lmdb, .leveldb], count: writes, observer: .childAdded, ackCount: ackCount > 0 ? ackCount : nil,
            timeout: common.timeoutDuration
        ).run()
        Report.line()
        let cold = try await coldStart.benchmark(timeout: common.timeoutDuration).run()
        Report.line()
        Summary(latency: latency, writes: writes, coldStart: cold).print()
        Report.line("total \(Format.number((clock.now - start).seconds, digits: 1)) s")
    }
}
