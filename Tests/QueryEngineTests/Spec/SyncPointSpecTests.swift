import CoreTree
import QueryEngine
import Testing

/// One run of one spec case: at the root or under `foo/bar/baz`.
struct SpecRun: CustomTestStringConvertible, Sendable {
    let caseName: String
    let nested: Bool
    let steps: [Node]

    var testDescription: String { nested ? "\(caseName) [under foo/bar/baz]" : caseName }

    func run() -> [String] {
        SyncPointSpecRunner(name: caseName, steps: steps, prefix: nested ? "foo/bar/baz" : .root).run()
    }

    /// Every case of `../shared/spec/syncPointSpec.json`, twice.
    static let all: Result<[SpecRun], SpecFileMissing> = SpecFile.load("syncPointSpec.json").map { spec in
        spec.children.flatMap { _, testCase -> [SpecRun] in
            let name = testCase.string("name") ?? "unnamed"
            let steps = testCase.immediateChild("steps").children.map(\.value)
            return [SpecRun(caseName: name, nested: false, steps: steps), SpecRun(caseName: name, nested: true, steps: steps)]
        }
    }

    static var runs: [SpecRun] { (try? all.get()) ?? [] }
}

@Suite("syncPointSpec.json")
struct SyncPointSpecTests {
    @Test("the spec file is present and holds 112 cases")
    func specIsPresent() throws {
        let runs = try SpecRun.all.get()
        #expect(runs.count == 224)
    }

    @Test("case", arguments: SpecRun.runs)
    func specCase(_ run: SpecRun) {
        let problems = run.run()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("summary of all runs")
    func summary() throws {
        let runs = try SpecRun.all.get()
        var failed: [String] = []
        for run in runs where !run.run().isEmpty { failed.append(run.testDescription) }
        print("syncPointSpec: \(runs.count - failed.count) passed, \(failed.count) failed")
        #expect(failed.isEmpty, "failing runs: \(failed.joined(separator: "; "))")
    }
}
