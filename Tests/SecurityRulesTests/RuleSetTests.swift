import CoreTree
import Foundation
import Testing
import TestSupport
import SecurityRules

/// Judging reads and writes with whole rules documents: the targaryen integration document, the
/// Bolt corpus, and the cascade and validation semantics one by one.
@Suite("rule sets")
struct RuleSetTests {
    static let now = 1_700_000_000_000.0

    private static func node(_ json: String) throws -> Node { try Node(jsonString: json) }


    @Test("targaryen's tests.json holds 8 expectations for its rules.json")
    func targaryenIntegrationIsPresent() throws {
        _ = try SharedSpec.data("rules/targaryen/tests.json")
        #expect(TargaryenExpectation.all.count == 8)
    }

    @Test("targaryen's rules.json (comments, a multi-line string) and each expectation of its tests.json", arguments: TargaryenExpectation.all)
    func targaryenIntegration(_ expectation: TargaryenExpectation) throws {
        let rules = try RuleSet(parsing: String(decoding: try SharedSpec.data("rules/targaryen/rules.json"), as: UTF8.self))
        let outcome: Bool
        if let write = expectation.data {
            let value = try ServerValue.resolve(write, existing: expectation.root.child(at: expectation.path), serverTime: Int64(Self.now))
            let after = expectation.root.updatingChild(at: expectation.path, to: value)
            outcome = rules.canWrite([expectation.path], before: expectation.root, after: after, auth: expectation.auth, now: Self.now)
        } else {
            outcome = rules.canRead(expectation.path, root: expectation.root, auth: expectation.auth, now: Self.now)
        }
        #expect(outcome == expectation.allowed)
    }

    /// Two samples are Bolt compiler test output that Firebase itself would refuse at deploy time,
    /// by the same checks the recorded fixtures show (`7` is not boolean, `skies` is unknown).
    static let boltRefusals = [
        "functional.json": "line 3, column 19: in .validate: a rule must evaluate to a boolean, but this one is a number",
        "groups.json": "line 5, column 49: in .validate: unknown name members",
    ]

    @Test("every Bolt sample document parses; all compile but two that Firebase's type checks refuse")
    func boltCorpus() throws {
        let files = try SharedSpec.files(in: "rules/bolt").filter { $0.hasSuffix(".json") }
        #expect(files.count == 22)
        for file in files {
            let text = String(decoding: try SharedSpec.data("rules/bolt/\(file)"), as: UTF8.self)
            do {
                _ = try RuleSet(parsing: text)
                #expect(Self.boltRefusals[file] == nil, "\(file) compiled")
            } catch {
                let expected = try #require(Self.boltRefusals[file], "\(file): \(error)")
                #expect(error.description.hasPrefix(expected), "\(file): \(error)")
            }
        }
    }

    @Test("a grant cascades down and a deeper false cannot take it back")
    func grantsCascade() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"users": {".read": true, "$uid": {".read": false, "secret": {".read": false}}}}}"#)
        let data = try Self.node(#"{"users": {"alice": {"secret": 1}}}"#)
        #expect(rules.canRead("users/alice/secret", root: data, auth: nil, now: Self.now))
        #expect(rules.canRead("users", root: data, auth: nil, now: Self.now))
        #expect(!rules.canRead("", root: data, auth: nil, now: Self.now))
    }

    @Test("rules are not filters: readable children do not make their parent readable")
    func rulesAreNotFilters() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"items": {"$id": {".read": "auth != null && data.child('owner').val() === auth.uid"}}}}"#)
        let data = try Self.node(#"{"items": {"a": {"owner": "u1"}, "b": {"owner": "u2"}}}"#)
        let u1 = try Self.node(#"{"uid": "u1"}"#)
        #expect(rules.canRead("items/a", root: data, auth: u1, now: Self.now))
        #expect(!rules.canRead("items/b", root: data, auth: u1, now: Self.now))
        #expect(!rules.canRead("items", root: data, auth: u1, now: Self.now))
        #expect(!rules.canRead("items/a", root: data, auth: nil, now: Self.now))
    }

    @Test("query-based read rules see the query's parameters")
    func queryRules() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"items": {".read": "query.orderByChild === 'owner' && query.equalTo === auth.uid && query.limitToFirst <= 10"}}}"#)
        let u1 = try Self.node(#"{"uid": "u1"}"#)
        let good = RuleQuery(order: .child("owner"), equalTo: .string("u1"), limitToFirst: 10)
        #expect(rules.canRead("items", root: .empty, auth: u1, now: Self.now, query: good))
        var other = good
        other.equalTo = .string("u2")
        #expect(!rules.canRead("items", root: .empty, auth: u1, now: Self.now, query: other))
        #expect(!rules.canRead("items", root: .empty, auth: u1, now: Self.now))
    }

    @Test("write needs a grant on the way down; .validate runs on the way and below, only where new data exists")
    func writeAndValidate() throws {
        let rules = try RuleSet(parsing: """
        {"rules": {
          "messages": {
            "$id": {
              ".write": "auth != null",
              ".validate": "newData.hasChildren(['text', 'by'])",
              "text": {".validate": "newData.isString() && newData.val().length <= 10"},
              "by": {".validate": "newData.val() === auth.uid"},
              "$other": {".validate": false}
            }
          }
        }}
        """)
        let auth = try Self.node(#"{"uid": "u1"}"#)
        func canSet(_ path: TreePath, _ json: String, auth: Node?, before: Node = .empty) throws -> Bool {
            let after = before.updatingChild(at: path, to: try Self.node(json))
            return rules.canWrite([path], before: before, after: after, auth: auth, now: Self.now)
        }
        #expect(try canSet("messages/m1", #"{"text": "hi", "by": "u1"}"#, auth: auth))
        #expect(try !canSet("messages/m1", #"{"text": "hi", "by": "u1"}"#, auth: nil), "no grant")
        #expect(try !canSet("messages/m1", #"{"text": "hi"}"#, auth: auth), "the parent's .validate")
        #expect(try !canSet("messages/m1", #"{"text": "far too long a text", "by": "u1"}"#, auth: auth), "a child's .validate")
        #expect(try !canSet("messages/m1", #"{"text": "hi", "by": "u2"}"#, auth: auth))
        #expect(try !canSet("messages/m1", #"{"text": "hi", "by": "u1", "extra": 1}"#, auth: auth), "$other rejects unknown children")
        let existing = try Self.node(#"{"messages": {"m1": {"text": "hi", "by": "u1"}}}"#)
        #expect(try canSet("messages/m1/text", #""yo""#, auth: auth, before: existing), "the ancestors' .validate sees the merged result")
        // A delete runs no .validate at the deleted location (there is no new data there).
        let deleted = existing.updatingChild(at: "messages/m1", to: .empty)
        #expect(rules.canWrite(["messages/m1"], before: existing, after: deleted, auth: auth, now: Self.now))
        // .validate does not cascade: a grant there is no write grant.
        let validateOnly = try RuleSet(parsing: #"{"rules": {"a": {".validate": true}}}"#)
        #expect(!validateOnly.canWrite(["a"], before: .empty, after: try Self.node(#"{"a": 1}"#), auth: auth, now: Self.now))
    }

    @Test("a multi-path update is judged as a whole")
    func multiPathUpdate() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"open": {".write": true}, "closed": {".write": false}}}"#)
        let after = try Self.node(#"{"open": 1, "closed": 2}"#)
        #expect(!rules.canWrite(["open", "closed"], before: .empty, after: after, auth: nil, now: Self.now))
        #expect(rules.canWrite(["open"], before: .empty, after: try Self.node(#"{"open": 1}"#), auth: nil, now: Self.now))
    }

    @Test("a named child wins over the wildcard beside it; the wildcard binds its key")
    func wildcardPrecedence() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"rooms": {"lobby": {".read": true}, "$room": {".read": "$room.beginsWith('public-')"}}}}"#)
        #expect(rules.canRead("rooms/lobby", root: .empty, auth: nil, now: Self.now))
        #expect(rules.canRead("rooms/public-1", root: .empty, auth: nil, now: Self.now))
        #expect(!rules.canRead("rooms/private-1", root: .empty, auth: nil, now: Self.now))
    }

    @Test(".indexOn is kept per location")
    func indexOn() throws {
        let rules = try RuleSet(parsing: #"{"rules": {"dinosaurs": {".indexOn": ["height", "length"]}, "scores": {".indexOn": ".value"}}}"#)
        #expect(rules.indexOn(at: "dinosaurs") == ["height", "length"])
        #expect(rules.indexOn(at: "scores") == [".value"])
        #expect(rules.indexOn(at: "other").isEmpty)
    }

    @Test("document errors carry the line and column of the problem and say what to fix")
    func locatedErrors() throws {
        let cases: [(String, Int, Int, String)] = [
            ("{\"rules\": {\n  \"a\": {\n    \".read\": \"auth.uid == \"\n  }\n}}", 3, 27, "ends too early"),
            ("{\"rules\": {\n  \"a\": {\".reed\": true}\n}}", 2, 9, "unknown rule .reed"),
            ("{\"rules\": {\"$a\": {}, \"$b\": {}}}", 1, 22, "two wildcards"),
            ("{\"rules\": {\"a\": {\".read\": \"7\"}}}", 1, 28, "must evaluate to a boolean"),
            ("{\"rules\": {\"a\": {\".write\": \"query.limitToFirst < 5\"}}}", 1, 29, "query is only known in .read"),
            ("{\"rules\": {\"a\": {\".read\": \"newData.exists()\"}}}", 1, 28, "newData is only known"),
            ("{\"rules\": {/* never closed }}", 1, 12, "never closed"),
            ("{\"rules\": {\"a\": {\".read\": true}}, \"extra\": 1}", 1, 35, "unknown key \"extra\""),
            ("[1]", 1, 1, "a rules document is an object"),
        ]
        for (text, line, column, words) in cases {
            do {
                _ = try RuleSet(parsing: text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.line == line && error.column == column, "\(error) for \(text)")
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test("console syntax is accepted: comments, trailing commas, single quotes; strict JSON drops them")
    func consoleSyntax() throws {
        let text = """
        // rules for the demo
        {
          'rules': {
            /* everyone reads */
            ".read": true,
            "posts": { ".write": "auth != null", },
          },
        }
        """
        let rules = try RuleSet(parsing: text)
        #expect(rules.source == text)
        #expect(rules.strictJSON == #"{"rules":{".read":true,"posts":{".write":"auth != null"}}}"#)
        #expect(try RuleSet(parsing: rules.strictJSON).strictJSON == rules.strictJSON)
    }

    @Test("random documents and expressions get errors or rule sets, never a crash")
    func fuzz() {
        var random = SplitMix64(seed: 14)
        let vocabulary = ["auth", "root", "data", "newData", "now", "query", "$x", ".", "child", "(", ")", "[", "]", "'a'", "\"b/c\"",
                          "1", "0.5", "-", "+", "*", "/", "%", "!", "&&", "||", "==", "===", "!=", "<", ">=", "?", ":", ",",
                          "val", "exists", "hasChildren", "matches", "/^a+$/i", "length", "true", "null", "uid", "contains",
                          "replace", "parent", "orderByChild", "=", ";", "**", "\\", "'", "\u{0}", "é", "/*", "//", "\n"]
        var accepted = 0
        for _ in 0..<4000 {
            let count = Int(random.next() % 12) + 1
            let expression = (0..<count).map { _ in vocabulary[Int(random.next() % UInt64(vocabulary.count))] }.joined(separator: random.next() % 3 == 0 ? "" : " ")
            for kind in RuleKind.allCases {
                if let compiled = try? RuleExpression(expression, kind: kind, wildcards: ["$x"]) {
                    accepted += 1
                    let document = #"{"rules": {"$x": {"\#(kind.rawValue)": \#(RulesJSON.quote(compiled.source))}}}"#
                    if let rules = try? RuleSet(parsing: document) {
                        _ = rules.canRead("k/l", root: .empty, auth: nil, now: Self.now)
                        _ = rules.canWrite(["k"], before: .empty, after: Node(.number(1)), auth: nil, now: Self.now)
                    }
                }
            }
            let bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = try? RuleSet(parsing: "{\"rules\": {\".read\": \"" + String(decoding: bytes, as: UTF8.self) + "\"}}")
            _ = try? RuleSet(parsing: String(decoding: bytes, as: UTF8.self))
        }
        #expect(accepted > 0, "some random expressions are valid")
    }
}

/// JSON string quoting for building documents in tests.
enum RulesJSON {
    static func quote(_ string: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: string, options: [.fragmentsAllowed]), as: UTF8.self)
    }
}

/// One expectation of `../shared/spec/rules/targaryen/tests.json`: a read, or a write of `data`,
/// at `path` as a user, allowed or not.
struct TargaryenExpectation: Sendable, CustomTestStringConvertible {
    let path: TreePath
    let user: String
    let auth: Node?
    let data: Node?
    let allowed: Bool
    let root: Node

    var testDescription: String { "\(allowed ? "can" : "cannot") \(data == nil ? "read" : "write") \(path) as \(user)" }

    static let all: [TargaryenExpectation] = {
        guard let data = try? SharedSpec.data("rules/targaryen/tests.json"),
              let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let users = document["users"] as? [String: Any],
              let tests = document["tests"] as? [String: [String: Any]],
              let root = try? node(document["root"] as Any) else { return [] }
        var all: [TargaryenExpectation] = []
        for (pathString, expectations) in tests.sorted(by: { $0.key < $1.key }) {
            let path = TreePath(unchecked: pathString)
            for (key, allowed) in [("canRead", true), ("cannotRead", false)] {
                for user in expectations[key] as? [String] ?? [] {
                    all.append(TargaryenExpectation(path: path, user: user, auth: try? node(users[user] as Any), data: nil, allowed: allowed, root: root))
                }
            }
            for (key, allowed) in [("canWrite", true), ("cannotWrite", false)] {
                for write in expectations[key] as? [[String: Any]] ?? [] {
                    let user = write["auth"] as? String ?? ""
                    all.append(TargaryenExpectation(path: path, user: user, auth: try? node(users[user] as Any),
                                                    data: try? node(write["data"] as Any), allowed: allowed, root: root))
                }
            }
        }
        return all
    }()

    private static func node(_ object: Any) throws -> Node {
        try Node(json: try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]))
    }
}
