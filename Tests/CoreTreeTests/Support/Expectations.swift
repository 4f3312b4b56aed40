import Testing
@testable import CoreTree

/// Expects `body` to throw a ``CoreTreeError`` with `code` and a non-empty message, and returns it.
@discardableResult
func expectCoreTreeError(
    _ code: CoreTreeError.Code,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> CoreTreeError? {
    do {
        try body()
    } catch let error as CoreTreeError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, "empty message for \(error.code)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected CoreTreeError \(code), got \(error) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected CoreTreeError \(code), nothing was thrown \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
    return nil
}

/// Parses JSON text, recording an issue (and returning the empty node) if it does not parse.
func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Node {
    do {
        return try Node(jsonString: text)
    } catch {
        Issue.record("could not parse \(text): \(error)", sourceLocation: sourceLocation)
        return .empty
    }
}

/// A number leaf.
func num(_ value: Double, priority: Priority? = nil) -> Node { Node(.number(value), priority: priority) }
/// A string leaf.
func str(_ value: String, priority: Priority? = nil) -> Node { Node(.string(value), priority: priority) }
/// A boolean leaf.
func bool(_ value: Bool) -> Node { Node(.bool(value)) }

/// The UTF-8 bytes of a string, for comparisons that must not use Swift's canonical equivalence.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// A children node from key/value pairs (later duplicates win, empty values are dropped).
func tree(_ pairs: KeyValuePairs<ChildKey, Node>, priority: Priority? = nil) -> Node {
    Node(children: pairs.map { (key: $0.key, value: $0.value) }, priority: priority)
}

/// A list of writes, in order.
func writeList(_ pairs: KeyValuePairs<TreePath, Node>) -> [(path: TreePath, node: Node)] {
    pairs.map { (path: $0.key, node: $0.value) }
}
