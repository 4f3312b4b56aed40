import Testing
@testable import CoreTree

@Suite("Server values")
struct ServerValueTests {
    let now: Int64 = 1_700_000_000_123

    @Test("placeholders have the documented JSON form")
    func forms() {
        #expect(ServerValue.timestamp == json(#"{".sv": "timestamp"}"#))
        #expect(ServerValue.timestamp.jsonString() == #"{".sv":"timestamp"}"#)
        #expect(ServerValue.increment(2) == json(#"{".sv": {"increment": 2}}"#))
        #expect(ServerValue.increment(-0.5).jsonString() == #"{".sv":{"increment":-0.5}}"#)
        #expect(ServerValue.isPlaceholder(json(#"{".sv": "timestamp"}"#)))
        #expect(ServerValue.isPlaceholder(ServerValue.increment(1)))
        #expect(!ServerValue.isPlaceholder(json(#"{".sv": "timestamp", "a": 1}"#)))
        #expect(!ServerValue.isPlaceholder(json(#"{"sv": "timestamp"}"#)))
        #expect(!ServerValue.isPlaceholder(str("timestamp")))
        #expect(!ServerValue.isPlaceholder(.empty))
        #expect(ServerValue.containsPlaceholder(json(#"{"a": {"b": {".sv": "timestamp"}}}"#)))
        #expect(!ServerValue.containsPlaceholder(json(#"{"a": {"b": 1}, "c": "x"}"#)))
        #expect(!ServerValue.containsPlaceholder(num(1)))
    }

    @Test("timestamps resolve to the server time")
    func timestamp() throws {
        #expect(try ServerValue.resolve(ServerValue.timestamp, existing: .empty, serverTime: now) == num(Double(now)))
        #expect(try ServerValue.resolve(ServerValue.timestamp, existing: str("old"), serverTime: now) == num(Double(now)))
    }

    @Test("increments add to existing numbers and otherwise set the delta")
    func increment() throws {
        #expect(try ServerValue.resolve(ServerValue.increment(2), existing: num(40), serverTime: now) == num(42))
        #expect(try ServerValue.resolve(ServerValue.increment(-1.5), existing: num(1), serverTime: now) == num(-0.5))
        #expect(try ServerValue.resolve(ServerValue.increment(2), existing: .empty, serverTime: now) == num(2))
        #expect(try ServerValue.resolve(ServerValue.increment(2), existing: str("10"), serverTime: now) == num(2))
        #expect(try ServerValue.resolve(ServerValue.increment(2), existing: bool(true), serverTime: now) == num(2))
        #expect(try ServerValue.resolve(ServerValue.increment(2), existing: json(#"{"a": 1}"#), serverTime: now) == num(2))
    }

    @Test("an increment whose sum is not finite is refused, naming where")
    func incrementOverflow() throws {
        #expect(throws: CoreTreeError.self) {
            try ServerValue.resolve(ServerValue.increment(1e308), existing: num(1e308), serverTime: now)
        }
        #expect(throws: CoreTreeError.self) {
            try ServerValue.resolve(ServerValue.increment(-1e308), existing: num(-1e308), serverTime: now)
        }
        do {
            _ = try ServerValue.resolve(
                json(#"{"a": {"b": {".sv": {"increment": 1e308}}}}"#), existing: json(#"{"a": {"b": 1e308}}"#),
                serverTime: now, at: "root")
            Issue.record("the overflow was accepted")
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.message.contains("/root/a/b"), "\(error.message)")
        }
        // The largest finite sums still go through.
        #expect(try ServerValue.resolve(ServerValue.increment(1), existing: num(1e308), serverTime: now) == num(1e308 + 1))
    }

    @Test("nested placeholders resolve against the matching existing data")
    func nested() throws {
        let write = json(#"""
        {"created": {".sv": "timestamp"},
         "stats": {"views": {".sv": {"increment": 1}}, "likes": {".sv": {"increment": 5}}, "name": "x"},
         "plain": 3, ".priority": "p"}
        """#)
        let existing = json(#"{"stats": {"views": 10, "likes": "many"}, "created": 1}"#)
        let resolved = try ServerValue.resolve(write, existing: existing, serverTime: now)
        let expected = json(#"""
        {"created": 1700000000123, "stats": {"views": 11, "likes": 5, "name": "x"}, "plain": 3, ".priority": "p"}
        """#)
        #expect(resolved == expected, "\(resolved)")
        #expect(!ServerValue.containsPlaceholder(resolved))
        // Data without placeholders is returned unchanged.
        let plain = json(#"{"a": 1, "b": {"c": true}}"#)
        #expect(try ServerValue.resolve(plain, existing: existing, serverTime: now) == plain)
    }

    @Test("the JSON parser keeps `.sv` as a placeholder child")
    func parsing() {
        let node = json(#"{"t": {".sv": "timestamp"}}"#)
        #expect(ServerValue.isPlaceholder(node.immediateChild("t")))
        #expect(node.child(at: "t/.sv") == str("timestamp"))
    }

    @Test("validatePlaceholder accepts the known forms and rejects others")
    func validation() throws {
        try ServerValue.validatePlaceholder(ServerValue.timestamp, at: "a")
        try ServerValue.validatePlaceholder(ServerValue.increment(3), at: "a")
        try ServerValue.validatePlaceholder(ServerValue.increment(-1e-9), at: "a")
        let unknown = [
            #"{".sv": "now"}"#, #"{".sv": 1}"#, #"{".sv": true}"#, #"{".sv": {"increment": "1"}}"#,
            #"{".sv": {"increment": true}}"#, #"{".sv": {"decrement": 1}}"#, #"{".sv": {"increment": 1, "x": 2}}"#,
            #"{".sv": {"increment": {"a": 1}}}"#,
        ]
        for text in unknown {
            let error = expectCoreTreeError(.invalidValue, "\(text)") { try ServerValue.validatePlaceholder(json(text), at: "a/b") }
            #expect(error?.message.contains("/a/b") == true)
        }
        expectCoreTreeError(.invalidValue) { try ServerValue.validatePlaceholder(ServerValue.increment(.nan), at: "a") }
        expectCoreTreeError(.invalidValue) { try ServerValue.validatePlaceholder(ServerValue.increment(.infinity), at: "a") }
        // Validation of writes applies the same check to placeholders inside data.
        expectCoreTreeError(.invalidValue) { try Validation.validateWrite(json(#"{"x": {".sv": "bogus"}}"#), at: "a") }
        try Validation.validateWrite(json(#"{"x": {".sv": "timestamp"}, "y": {".sv": {"increment": 1}}}"#), at: "a")
    }

    @Test("a resolved server value keeps the priority written beside it")
    func resolvedValueKeepsItsPriority() throws {
        let timestamp = json(#"{".value": {".sv": "timestamp"}, ".priority": 5}"#)
        let resolved = try ServerValue.resolve(timestamp, existing: .empty, serverTime: 1234)
        #expect(resolved.leafValue == .number(1234))
        #expect(resolved.priority == .number(5))
        let nested = json(#"{"a": {".value": {".sv": {"increment": 2}}, ".priority": "p"}}"#)
        let incremented = try ServerValue.resolve(nested, existing: json(#"{"a": 40}"#), serverTime: 1)
        #expect(incremented.immediateChild("a").leafValue == .number(42))
        #expect(incremented.immediateChild("a").priority == .string("p"))
    }

    @Test("a server value as a priority is carried until the write resolves it, from JSON and from Foundation")
    func placeholderPriority() throws {
        let leaf = json(#"{".value": 1, ".priority": {".sv": "timestamp"}}"#)
        #expect(ServerValue.placeholderPriority(of: leaf) == ServerValue.timestamp)
        try Validation.validateWrite(leaf, at: "a")
        let resolvedLeaf = try ServerValue.resolve(leaf, existing: .empty, serverTime: 1234)
        #expect(resolvedLeaf.leafValue == .number(1) && resolvedLeaf.priority == .number(1234))

        let object = json(#"{"x": 1, ".priority": {".sv": {"increment": 2}}}"#)
        let resolvedObject = try ServerValue.resolve(object, existing: Node(.number(9), priority: .number(5)), serverTime: 1)
        #expect(resolvedObject.immediateChild("x").leafValue == .number(1))
        #expect(resolvedObject.priority == .number(7), "an increment adds to the stored priority")

        // The carrier goes over the wire and into the write queue as JSON and comes back the same.
        #expect(json(leaf.jsonString(format: .export)) == leaf)
        #expect(json(object.jsonString(format: .export)) == object)
        let fromFoundation = try Node(foundationValue: [".value": "v", ".priority": [".sv": "timestamp"]] as [String: Any])
        #expect(try ServerValue.resolve(fromFoundation, existing: .empty, serverTime: 5).priority == .number(5))

        // Only a placeholder may ride as `.priority`; `.value` alone is still not a key.
        expectCoreTreeError(.invalidValue) { try Validation.validateWrite(json(#"{".value": 1, ".priority": {".sv": "later"}}"#), at: "a") }
        expectCoreTreeError(.invalidPriority) { _ = try Node(jsonString: #"{".value": 1, ".priority": {"x": 1}}"#) }
        let priorityOnly = try ServerValue.resolve(json(#"{".priority": {".sv": "timestamp"}}"#), existing: .empty, serverTime: 1)
        #expect(priorityOnly.isEmpty, "a priority alone on nothing is nothing")
    }
}
