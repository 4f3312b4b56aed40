// rtdb-bench: compares the storage backends on identical workloads, each beside its raw C
// library, and writes a table, JSON and an SVG chart. Run it in release mode:
// `swift run -c release rtdb-bench --dir /path/on/the/disk --chart bench.svg`.
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import Persistence
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import StorageBench

@main
struct RTDBBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-bench",
        abstract: "Compares the storage backends, each beside its raw C library, on identical workloads.",
        discussion: "Workloads: \(Workload.selectable.map(\.rawValue).joined(separator: ", ")). The disk's own write+fsync rate is measured beside them. Ratios to raw are our time per operation over the raw engine's.")

    /// The backends this tool links, in the order they are reported.
    static let available: [StorageBackend] = [.sqlite, .lmdb, .leveldb]
    static let registry = StorageBackends(available)

    @Option(help: "Comma-separated backends (default: every registered one: \(registry.names.joined(separator: ", "))).")
    var backends: String?

    @Option(help: "Comma-separated workloads (default: all).")
    var workloads: String?

    @Option(help: "Runs of each workload; the report gives the median with min and max.")
    var runs = 5

    @Option(help: "A directory on the disk to measure; the run works inside it and leaves nothing behind.")
    var dir = "."

    @Option(help: "Write the report as JSON to this file.")
    var json: String?

    @Option(help: "Write the chart as SVG to this file.")
    var chart: String?

    @Option(help: "Write the tables as Markdown to this file.")
    var markdown: String?

    @Option(help: "full (a 10 MB cache, the README's figures) or tiny (a few of everything, to check the tool).")
    var scale: ScaleChoice = .full

    enum ScaleChoice: String, ExpressibleByArgument {
        case full, tiny
        var value: BenchScale { self == .full ? .full : .tiny }
    }

    func validate() throws {
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
        _ = try chosenBackends()
        _ = try chosenWorkloads()
    }

    func run() throws {
        try withExtendedLifetime(Self.removeScratchOnSignals()) { try measure() }
    }

    private func measure() throws {
        let configuration = BenchConfiguration(
            backends: try chosenBackends(), workloads: try chosenWorkloads(), runs: runs, directory: dir, scale: scale.value)
        let progress = ProgressLine()
        let report: BenchReport
        do {
            report = try BenchRunner.run(configuration) { progress.show($0) }
        } catch where ScratchDirectory.isStopping {
            // Stopped by a signal: its handler removes the directory and exits (130 or 143).
            while true { sleep(60) }
        }
        progress.finish()
        let table = MarkdownReport.render(report)
        print(table, terminator: "")
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: URL(fileURLWithPath: json))
        }
        if let chart { try SVGChart.render(report).write(toFile: chart, atomically: true, encoding: .utf8) }
        if let markdown { try table.write(toFile: markdown, atomically: true, encoding: .utf8) }
    }

    private func chosenBackends() throws -> [StorageBackend] {
        guard let backends else { return Self.available }
        return try list(backends).map { name in
            do { return try Self.registry.backend(named: name) } catch { throw ValidationError("\(error)") }
        }
    }

    private func chosenWorkloads() throws -> [Workload] {
        guard let workloads else { return Workload.selectable }
        return try list(workloads).map { name in
            guard let workload = Workload(rawValue: name), workload != .diskFsync else {
                throw ValidationError("no workload is called '\(name)'; available: \(Workload.selectable.map(\.rawValue).joined(separator: ", "))")
            }
            return workload
        }
    }

    private func list(_ text: String) throws -> [String] {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else { throw ValidationError("an empty list") }
        return names
    }

    /// On Ctrl-C or SIGTERM: remove the scratch directory, then exit (130 or 143).
    private static func removeScratchOnSignals() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                ScratchDirectory.removeAll()
                FileHandle.standardError.write(Data("\nrtdb-bench: stopped; the scratch directory is removed\n".utf8))
                Glibc.exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}

/// The progress line on standard error: rewritten in place on a terminal, a plain line per step otherwise.
final class ProgressLine {
    private let isTerminal = isatty(STDERR_FILENO) != 0

    func show(_ progress: BenchProgress) {
        let text = "[\(progress.done)/\(progress.total)] \(progress.step)"
        FileHandle.standardError.write(Data((isTerminal ? "\r\u{1B}[K" + text : text + "\n").utf8))
    }

    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
