import CoreTree
import FuzzSupport

/// The JSON parser, `JSONReader` and `JSONStreamReader` (plain and `update()` form) on any bytes.
///
/// The first byte picks the stream reader's piece size and chunk size; the rest is the document.
/// Properties: a document the parser accepts writes back (export format) to text that parses to
/// the same tree; only UTF-8 is accepted; `JSONReader` reads exactly the documents the parser accepts; what the stream
/// reader accepts, the parser accepts, and its pieces applied in order give the parser's tree;
/// every refusal is a `CoreTreeError` (typed throws), never a trap.
public func checkJSON(_ input: [UInt8]) {
    guard let control = input.first else { return }
    let document = Array(input.dropFirst())
    let parsed: Node?
    do {
        parsed = try Node(json: document)
    } catch {
        fuzzRequire(!error.message.isEmpty, "a refusal without a message")
        parsed = nil
    }
    if let parsed { checkWritesBack(parsed) }
    checkReaderAgrees(document, parsed: parsed)
    let subtreeBytes = 1 + Int(control & 0x1F)
    let chunkBytes = 1 + Int(control >> 5) * 7
    checkStream(document, parsed: parsed, subtreeBytes: subtreeBytes, chunkBytes: chunkBytes)
    checkUpdateStream(document, parsed: parsed, subtreeBytes: subtreeBytes, chunkBytes: chunkBytes)
}

/// Writes `node` in export format and parses it again.
func checkWritesBack(_ node: Node) {
    let written = node.jsonString(format: .export)
    do {
        let again = try Node(jsonString: written)
        fuzzRequire(again == node, "\(written) parsed to a different tree: \(again.jsonString(format: .export))")
    } catch {
        fatalError("the writer's output \(written) does not parse: \(error.message)")
    }
}

/// Only UTF-8 is accepted, and `JSONReader`'s `readNode()` accepts exactly what the parser does,
/// giving the parser's tree.
func checkReaderAgrees(_ document: [UInt8], parsed: Node?) {
    guard let text = String(validating: document, as: UTF8.self) else {
        fuzzRequire(parsed == nil, "the parser accepted bytes that are not UTF-8")
        return
    }
    do {
        let node = try JSONReader.read(text) { reader throws(CoreTreeError) in try reader.readNode() }
        fuzzRequire(parsed != nil, "JSONReader read a node from a document the parser refuses")
        fuzzRequire(node == parsed, "JSONReader read \(node.jsonString(format: .export)), the parser something else")
    } catch {
        fuzzRequire(parsed == nil, "JSONReader refused a document the parser accepts: \(error.message)")
    }
}

/// Feeds the document to a stream reader in chunks and applies its pieces.
func checkStream(_ document: [UInt8], parsed: Node?, subtreeBytes: Int, chunkBytes: Int) {
    var reader = JSONStreamReader(subtreeBytes: subtreeBytes, maxValueBytes: 1 << 16)
    var tree = Node.empty
    do {
        var start = 0
        while start < document.count {
            let end = min(document.count, start + chunkBytes)
            for item in try reader.read(document[start..<end]) { item.apply(to: &tree) }
            start = end
        }
        for item in try reader.finish() { item.apply(to: &tree) }
    } catch {
        fuzzRequire(!error.message.isEmpty, "a stream refusal without a message")
        return
    }
    guard let parsed else { fatalError("the stream reader accepted a document the parser refuses") }
    fuzzRequire(tree == parsed, "the stream's pieces gave \(tree.jsonString(format: .export)), the parser \(parsed.jsonString(format: .export))")
}

/// The update form accepts only objects the parser accepts too.
func checkUpdateStream(_ document: [UInt8], parsed: Node?, subtreeBytes: Int, chunkBytes: Int) {
    var reader = JSONStreamReader.update(subtreeBytes: subtreeBytes, maxValueBytes: 1 << 16)
    do {
        var start = 0
        while start < document.count {
            let end = min(document.count, start + chunkBytes)
            for item in try reader.read(document[start..<end]) {
                fuzzRequire(item.path.depth >= 1, "an update piece at the root")
            }
            start = end
        }
        _ = try reader.finish()
    } catch {
        return
    }
    fuzzRequire(parsed != nil, "the update reader accepted a document the parser refuses")
}
