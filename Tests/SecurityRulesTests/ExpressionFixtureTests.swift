import CoreTree
import Foundation
import Testing
import TestSupport
@testable import SecurityRules

/// One case of `../shared/spec/rules/targaryen/fixtures.json`: an expression with the outcome
/// recorded against the hosted Firebase service.
struct ExpressionFixture: Sendable, CustomTestStringConvertible {
    let index: Int
    let rule: String
    let user: String
    let auth: Node?
    let wildchildren: [String: String]
    let data: Node
    let query: RuleQuery
    let isValid: Bool
    let failAtRuntime: Bool
    let evaluateTo: Bool?

    var testDescription: String { "#\(index) \(user): \(rule)" }

    enum Outcome: Equatable, CustomStringConvertible {
        case invalid, runtimeError, value(Bool)
        var description: String {
            switch self {
            case .invalid: "rejected at deploy"
            case .runtimeError: "runtime error"
            case .value(let value): "evaluates to \(value)"
            }
        }
    }

    var expected: Outcome { !isValid ? .invalid : failAtRuntime ? .runtimeError : .value(evaluateTo ?? false) }

    /// Replays the case the way it was recorded: the rule as `.read` at the path made of the
    /// wildcard values (in the order of their sorted names), `data` at the root.
    func replay() -> Outcome {
        let names = wildchildren.keys.sorted()
        let expression: RuleExpression
        do {
            expression = try RuleExpression(rule, kind: .read, wildcards: Set(names))
        } catch {
            return .invalid
        }
        let scope = RuleScope(auth: auth, now: 1_700_000_000_000, root: data, newRoot: nil,
                              path: TreePath(keys: names.map { ChildKey(wildchildren[$0]!) }), wildcards: names.map { ($0, wildchildren[$0]!) }, query: query)
        switch RuleEvaluator(scope: scope).outcome(expression) {
        case .failure: return .runtimeError
        case .success(.bool(let value)): return .value(value)
        case .success: return .value(false)
        }
    }

    static func node(_ object: Any?) throws -> Node {
        guard let object, !(object is NSNull) else { return .empty }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])
        return try Node(json: data)
    }

    static let all: [ExpressionFixture] = {
        guard let data = try? SharedSpec.data("rules/targaryen/fixtures.json"),
              let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let users = document["users"] as? [String: Any],
              let tests = document["tests"] as? [[String: Any]] else { return [] }
        return tests.enumerated().compactMap { index, test in
            let user = test["user"] as? String ?? "unauth"
            var query = RuleQuery()
            if let parameters = test["query"] as? [String: Any] {
                if let child = parameters["orderByChild"] as? String { query.order = .child(child) }
                if parameters["orderByValue"] as? Bool == true { query.order = .value }
                if parameters["orderByKey"] as? Bool == true { query.order = .key }
                if parameters["orderByPriority"] as? Bool == true { query.order = .priority }
                func leaf(_ key: String) -> LeafValue? { (try? node(parameters[key]))?.leafValue }
                query.startAt = leaf("startAt")
                query.endAt = leaf("endAt")
                query.equalTo = leaf("equalTo")
                query.limitToFirst = parameters["limitToFirst"] as? Int
                query.limitToLast = parameters["limitToLast"] as? Int
            }
            guard let auth = try? node(users[user]), let root = try? node(test["data"]) else { return nil }
            return ExpressionFixture(
                index: index, rule: test["rule"] as? String ?? "", user: user, auth: auth.isEmpty ? nil : auth,
                wildchildren: test["wildchildren"] as? [String: String] ?? [:], data: root, query: query,
                isValid: test["isValid"] as? Bool ?? true, failAtRuntime: test["failAtRuntime"] as? Bool ?? false,
                evaluateTo: test["evaluateTo"] as? Bool)
        }
    }()
}

@Suite("rules fixtures (targaryen, recorded against Firebase)")
struct ExpressionFixtureTests {
    @Test("the fixture file is present and holds 186 cases")
    func fixturesArePresent() throws {
        _ = try SharedSpec.data("rules/targaryen/fixtures.json")
        #expect(ExpressionFixture.all.count == 186)
    }

    @Test("case", arguments: ExpressionFixture.all)
    func replay(_ fixture: ExpressionFixture) {
        let outcome = fixture.replay()
        #expect(outcome == fixture.expected, "\(fixture.rule) as \(fixture.user): expected \(fixture.expected), got \(outcome)")
    }

    @Test("summary line")
    func summary() {
        let failed = ExpressionFixture.all.filter { $0.replay() != $0.expected }
        for fixture in failed { print("rules fixture failed: #\(fixture.index) \(fixture.rule): expected \(fixture.expected), got \(fixture.replay())") }
        print("rules fixtures: \(ExpressionFixture.all.count - failed.count) passed, \(failed.count) failed")
        #expect(failed.isEmpty)
    }
}
