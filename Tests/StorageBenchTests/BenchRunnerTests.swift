import Foundation
import Persistence
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import StorageBench
import Testing
import TestSupport

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The comparison tool's library on tiny workloads: every backend and workload appears, the
/// outputs parse, and nothing is left in the measured directory. No timing is asserted.
@Suite struct BenchRunnerTests {
    static let backends: [StorageBackend] = [.sqlite, .lmdb, .leveldb]

    /// One tiny run of everything, shared by the tests that read its outputs.
    static func tinyReport(runs: Int = 2) async throws -> (BenchReport, [BenchProgress]) {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let collected = ProgressLog()
        let report = try await offThePool {
            try BenchRunner.run(BenchConfiguration(backends: backends, runs: runs, directory: directory, scale: .tiny)) { collected.add($0) }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(left.isEmpty, "the run left \(left) behind")
        return (report, collected.all)
    }

    @Test func everyBackendAndWorkloadHasAResultWithItsRawEngine() async throws {
        let (report, progress) = try await Self.tinyReport()
        for workload in Workload.selectable where workload != .footprint {
            for backend in Self.backends.map(\.name) {
                let ours = try #require(report.result(workload, backend), "no \(workload.rawValue) row for \(backend)")
                let raw = try #require(report.result(workload, "\(backend)-raw"), "no raw \(workload.rawValue) row for \(backend)")
                #expect(ours.unit == workload.unit)
                #expect(ours.min <= ours.median && ours.median <= ours.max && ours.min > 0)
                let ratio = try #require(ours.ratioToRaw)
                let expected = workload.higherIsBetter ? raw.median / ours.median : ours.median / raw.median
                #expect(abs(ratio - expected) < 1e-9)
            }
        }
        let disk = try #require(report.result(.diskFsync, "disk"))
        #expect(disk.median > 0 && disk.ratioToRaw == nil)
        #expect(Set(report.footprint.map(\.backend)) == Set(Self.backends.map(\.name)))
        for row in report.footprint {
            #expect(row.logicalBytes > 0 && row.diskBytes > 0 && (row.rawDiskBytes ?? 0) > 0)
        }
        #expect(report.machine.runs == 2)
        // The progress counts up to its total, each step named.
        #expect(progress.first?.done == 0)
        #expect(progress.last.map { $0.done == $0.total } == true)
        #expect(progress.contains { $0.step.contains("lmdb-raw") })
    }

    @Test func theJSONHasTheDocumentedShape() async throws {
        let (report, _) = try await Self.tinyReport(runs: 1)
        let data = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["machine"] is [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.count == report.results.count)
        for row in results {
            #expect(Set(row.keys) == ["workload", "backend", "median", "min", "max", "unit", "ratio_to_raw"])
        }
        let footprint = try #require(object["footprint"] as? [[String: Any]])
        for row in footprint {
            #expect(row["backend"] is String && row["logical_bytes"] is Int && row["disk_bytes"] is Int)
        }
        // It reads back as the same report.
        #expect(try JSONDecoder().decode(BenchReport.self, from: data) == report)
    }

    @Test func theChartIsValidSVGWithEveryPanel() async throws {
        let (report, _) = try await Self.tinyReport(runs: 1)
        let svg = SVGChart.render(report)
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = SVGCollector()
        parser.delegate = collector
        #expect(parser.parse(), "the SVG does not parse: \(String(describing: parser.parserError))")
        #expect(collector.root == "svg")
        for workload in Workload.selectable {
            #expect(collector.texts.contains { $0.hasPrefix(workload.rawValue + " —") }, "no panel for \(workload.rawValue)")
        }
        #expect(collector.rectangles > report.results.count)
    }

    @Test func theMarkdownTableHasARowPerResult() async throws {
        let (report, _) = try await Self.tinyReport(runs: 1)
        let lines = MarkdownReport.render(report).split(separator: "\n")
        let rows = lines.filter { $0.hasPrefix("| ") && !$0.hasPrefix("| workload") && !$0.hasPrefix("| backend") }
        #expect(rows.count == report.results.count + report.footprint.count)
    }

    @Test func aChosenSubsetRunsOnlyThat() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let report = try await offThePool {
            try BenchRunner.run(BenchConfiguration(backends: [.lmdb], workloads: [.append], runs: 1, directory: directory, scale: .tiny))
        }
        #expect(Set(report.results.map(\.backend)) == ["disk", "lmdb", "lmdb-raw"])
        #expect(Set(report.results.map(\.workload)) == ["disk-fsync", "append"])
        #expect(report.footprint.isEmpty)
    }

    @Test func aMissingDirectoryIsAClearError() async throws {
        let outcome = try await offThePool {
            Result { try BenchRunner.run(BenchConfiguration(backends: [.sqlite], runs: 1, directory: "/nonexistent/rtdb-bench", scale: .tiny)) }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("a run in a missing directory succeeded")
            return
        }
        #expect((error as? BenchError)?.description.contains("does not exist") == true)
    }

    /// The tool stopped with Ctrl-C (SIGINT) in the middle of a run removes its scratch directory.
    @Test func ctrlCLeavesNothingBehind() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tool = try builtExecutable(named: "rtdb-bench")
        let child = try ChildProcess(executable: tool, arguments: ["--scale", "tiny", "--runs", "1000", "--dir", directory])
        let started = try await waitUntil(timeout: .seconds(30)) {
            !((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).isEmpty || !child.process.isRunning
        }
        #expect(started && child.process.isRunning, "the tool never started working in \(directory)")
        // A real delay, not a proof: it lets the real process get into its stores, so Ctrl-C
        // lands mid-work (the check below holds wherever it lands).
        try await Task.sleep(for: .milliseconds(300))
        let status = await child.stop(signal: SIGINT)
        #expect(status == 128 + SIGINT, "the tool did not exit through its Ctrl-C handler")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(left.isEmpty, "Ctrl-C left \(left) behind")
    }
}

/// Progress reports from the runner's thread.
final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [BenchProgress] = []
    func add(_ progress: BenchProgress) { lock.withLock { entries.append(progress) } }
    var all: [BenchProgress] { lock.withLock { entries } }
}

/// Counts what an SVG holds.
final class SVGCollector: NSObject, XMLParserDelegate {
    var root: String?
    var texts: [String] = []
    var rectangles = 0
    private var inText = false
    private var current = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        if root == nil { root = name }
        if name == "rect" { rectangles += 1 }
        if name == "text" {
            inText = true
            current = ""
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if inText { current += string } }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "text" {
            texts.append(current)
            inText = false
        }
    }
}

func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "rtdb-bench-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
