import CoreTree
import Foundation
import QueryEngine
import Testing

/// One run of one spec case: at the root or under `foo/bar/baz`.
struct SpecRun: CustomTestStringConvertible, Sendable {
    let caseName: String
    let nested: Bool
    /// The case's steps as JSON (nulls matter in the spec: merge deletes, `equalTo(null)`).
    let steps: Data

    var testDescription: String { nested ? "\(caseName) [under foo/bar/baz]" : caseName }

    func run() -> [String] {
        SyncPointSpecRunner(name: caseName, steps: steps, prefix: nested ? "foo/bar/baz" : .root).run()
    }

    /// Every case of `../shared/spec/syncPointSpec.json`, twice.
    static let all: Result<[SpecRun], SpecFileMissing> = SpecFile.data("syncPointSpec.json").flatMap { data in
        guard let cases = (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] else {
            return .failure(SpecFileMissing(message: "syncPointSpec.json is not a JSON array of cases"))
        }
        return .success(cases.flatMap { testCase -> [SpecRun] in
            let name = testCase["name"] as? String ?? "unnamed"
            let steps = (try? JSONSerialization.data(withJSONObject: testCase["steps"] ?? [])) ?? Data()
            return [SpecRun(caseName: name, nested: false, steps: steps), SpecRun(caseName: name, nested: true, steps: steps)]
        })
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
        for run in runs {
            let problems = run.run()
            if problems.isEmpty { continue }
            failed.append(run.testDescription)
            if !run.nested { print("FAILED \(run.caseName):\n  " + problems.joined(separator: "\n  ")) }
        }
        print("syncPointSpec: \(runs.count - failed.count) passed, \(failed.count) failed")
        #expect(failed.isEmpty, "failing runs: \(failed.joined(separator: "; "))")
    }
}
