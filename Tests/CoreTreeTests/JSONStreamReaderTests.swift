import Testing
import TestSupport
@testable import CoreTree

/// The streaming reader against the whole-document parser: the same document, cut into chunks at
/// random places and read with random subtree sizes, must give the same tree.
@Suite("JSON stream reader")
struct JSONStreamReaderTests {
    /// Reads `bytes` in chunks of random sizes and returns the items.
    static func stream(
        _ bytes: [UInt8], subtreeBytes: Int, maxChunk: Int, using random: inout some RandomNumberGenerator
    ) throws(CoreTreeError) -> [JSONStreamItem] {
        var reader = JSONStreamReader(subtreeBytes: subtreeBytes)
        var items: [JSONStreamItem] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 1...max(1, maxChunk), using: &random))
            items += try reader.read(bytes[start..<end])
            start = end
        }
        items += try reader.finish()
        return items
    }

    static func assemble(_ items: [JSONStreamItem]) -> Node {
        var root = Node.empty
        for item in items { item.apply(to: &root) }
        return root
    }

    @Test("random trees in every format give the whole parser's tree", arguments: [11, 12, 13, 14] as [UInt64])
    func randomTrees(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            // Hands the pool thread back each round: CPU-bound tests that never suspend stall the
            // whole parallel suite on a two-thread pool (clients waiting on real-time backoffs time out).
            await Task.yield()
            let node = Gen.node(depth: Int.random(in: 0...5, using: &random), maxWidth: 7, validKeys: true, using: &random)
            let format = random.pick([JSONFormat.export, [.export, .prettyPrinted], .plain, [.priorities, .arrays]])
            let bytes = node.jsonBytes(format: format)
            let whole = try Node(json: bytes)
            let subtreeBytes = random.pick([1, 2, 8, 30, 100, 400, 1 << 20])
            let items = try Self.stream(bytes, subtreeBytes: subtreeBytes, maxChunk: random.pick([1, 3, 16, 200, 1 << 20]), using: &random)
            #expect(Self.assemble(items) == whole, "subtree \(subtreeBytes): \(String(decoding: bytes, as: UTF8.self))")
            #expect(items.allSatisfy { $0.containsServerValues || !ServerValue.containsPlaceholder($0.node) })
            // Keys in key order and unique, as every export writes them: no item replaces another.
            #expect(items.allSatisfy { !$0.replaces }, "\(items)")
            // Pieces never overlap: no path holds another.
            let paths = items.map(\.path)
            for (index, path) in paths.enumerated() {
                for other in paths[(index + 1)...] {
                    #expect(!path.contains(other) && !other.contains(path), "\(path) and \(other)")
                }
            }
        }
    }

    @Test("shuffled members, duplicates, nulls, .value forms and white space give the whole parser's tree", arguments: [21, 22, 23, 24, 25] as [UInt64])
    func messyDocuments(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            await Task.yield()
            let node = Gen.node(depth: Int.random(in: 0...4, using: &random), maxWidth: 6, validKeys: true, using: &random)
            let text = MessyJSON.write(node, using: &random)
            let bytes = Array(text.utf8)
            let whole = try Node(json: bytes)
            for subtreeBytes in [1, 5, 40, 1 << 20] {
                let items = try Self.stream(bytes, subtreeBytes: subtreeBytes, maxChunk: random.pick([1, 7, 64, 1 << 20]), using: &random)
                #expect(Self.assemble(items) == whole, "subtree \(subtreeBytes): \(text)\n\(items)")
                #expect(items.allSatisfy { $0.containsServerValues || !ServerValue.containsPlaceholder($0.node) })
            }
        }
    }

    @Test("server values stay placeholders, as a priority too")
    func serverValues() throws {
        let text = #"{"a": {".sv": "timestamp"}, "b": {"x": 1, "y": 2, ".priority": {".sv": "timestamp"}}, "c": {".value": 3, ".priority": {".sv": {"increment": 2}}}}"#
        let whole = try Node(jsonString: text)
        var random = SplitMix64(seed: 1)
        for subtreeBytes in [1, 10, 1000] {
            let items = try Self.stream(Array(text.utf8), subtreeBytes: subtreeBytes, maxChunk: 5, using: &random)
            #expect(Self.assemble(items) == whole)
            // Every piece that holds a server value says so.
            #expect(items.allSatisfy { $0.containsServerValues == ServerValue.containsPlaceholder($0.node) }, "\(items)")
        }
    }

    @Test("a large object comes out member by member, each within the subtree size, with bounded memory")
    func bounded() throws {
        var tree = Node.empty
        var random = SplitMix64(seed: 99)
        for room in 0..<60 {
            for message in 0..<60 {
                let body = Node(children: [
                    (key: ChildKey("text"), value: Node(.string(String(repeating: "x", count: Int.random(in: 0...80, using: &random))))),
                    (key: ChildKey("ts"), value: Node(.number(Double(room * 1000 + message)))),
                ])
                tree = tree.updatingChild(at: TreePath(keys: ["rooms", ChildKey("r\(room)"), ChildKey("m\(message)")]), to: body)
            }
        }
        tree = tree.updatingChild(at: "rooms/r7/.priority", to: Node(.number(7)))
        let bytes = tree.jsonBytes(format: .export)
        #expect(bytes.count > 200_000)
        let subtreeBytes = 4_096
        var reader = JSONStreamReader(subtreeBytes: subtreeBytes)
        var items: [JSONStreamItem] = []
        var largestBuffer = 0
        for start in stride(from: 0, to: bytes.count, by: 1_000) {
            items += try reader.read(bytes[start..<min(bytes.count, start + 1_000)])
            largestBuffer = max(largestBuffer, reader.bufferedBytes)
        }
        items += try reader.finish()
        #expect(Self.assemble(items) == tree)
        #expect(largestBuffer <= 2 * (subtreeBytes + 1_000) + (1 << 16))
        #expect(items.count > 120)
        for item in items where !item.isPriority {
            #expect(item.node.jsonBytes(format: .export).count <= subtreeBytes)
        }
        #expect(items.contains(JSONStreamItem(path: "rooms/r7/.priority", node: Node(.number(7)))))
    }

    @Test("malformed documents fail as the whole parser fails, at the same byte", arguments: [
        #"{"a": 1,}"#, #"{"a" 1}"#, #"{"a": [1, 2}"#, #"[1, 2,]"#, #"{"a": tru}"#, #"{"a": 01}"#, #"{"a": "x"} x"#,
        #"{"a": {"b": 1}"#, #"{"a": "\q"}"#, "{\"a\": \"\u{1}\"}", #"["#, #"{"#, #"{"a""#, #"{"a":"#, #""#, "   ", #"{"a": 1 "b": 2}"#,
        #"{"a": [1 2]}"#, #"{"a": {"b": [true, nul]}}"#, #"[[[[]]]"#, #"{"a": -}"#, #"{"a": 1.}"#, #"{"a": 1e}"#, #"}"#,
    ])
    func malformed(_ text: String) throws {
        let expected = #expect(throws: CoreTreeError.self) { try Node(jsonString: text) }
        var random = SplitMix64(seed: 3)
        for subtreeBytes in [1, 3, 1000] {
            for maxChunk in [1, 4, 1000] {
                let error = #expect(throws: CoreTreeError.self) {
                    try Self.stream(Array(text.utf8), subtreeBytes: subtreeBytes, maxChunk: maxChunk, using: &random)
                }
                #expect(error == expected, "subtree \(subtreeBytes), chunks \(maxChunk): \(text)")
            }
        }
    }

    @Test("bad UTF-8 is refused at its byte")
    func badUTF8() throws {
        let bytes: [UInt8] = Array(#"{"ok": 1, "a": ""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        var random = SplitMix64(seed: 4)
        for subtreeBytes in [1, 1000] {
            let error = try #require(throws: CoreTreeError.self) { try Self.stream(bytes, subtreeBytes: subtreeBytes, maxChunk: 3, using: &random) }
            // The parser names the byte after the string's closing quote.
            #expect(error.message == "Malformed JSON at byte 19: invalid UTF-8 in a string.", "\(error)")
        }
        let outside = Array(#"{"a": 1, "#.utf8) + [0xC3] + Array(#""b": 2}"#.utf8)
        let error = try #require(throws: CoreTreeError.self) { try Self.stream(outside, subtreeBytes: 1, maxChunk: 2, using: &random) }
        #expect(error.message == "Malformed JSON at byte 9: expected a member name.")
    }

    @Test("invalid keys are refused at the byte of the key, or of the value read whole that holds it")
    func invalidKeys() throws {
        var random = SplitMix64(seed: 5)
        let text = #"{"good": {"x": 1, "bad.key": 2}}"#
        // Read member by member: the name's own byte.
        let streamed = try #require(throws: CoreTreeError.self) { try Self.stream(Array(text.utf8), subtreeBytes: 1, maxChunk: 2, using: &random) }
        #expect(streamed.code == .invalidKey)
        #expect(streamed.message.hasPrefix("At byte 18: invalid key \"bad.key\""), "\(streamed)")
        // Read whole: found again at the name's byte, with the key's path.
        let whole = try #require(throws: CoreTreeError.self) { try Self.stream(Array(text.utf8), subtreeBytes: 1000, maxChunk: 2, using: &random) }
        #expect(whole.code == .invalidKey)
        #expect(whole.message.hasPrefix("At byte 18: Invalid key \"bad.key\" at \"/good\""), "\(whole)")
        // A string too long, in a value read whole: the string's byte.
        let long = #"{"a": {"b": 1, "c": ""# + String(repeating: "x", count: Validation.maxStringBytes + 1) + #""}}"#
        let tooLong = try #require(throws: CoreTreeError.self) { try Self.stream(Array(long.utf8), subtreeBytes: 64 << 20, maxChunk: 1 << 20, using: &random) }
        #expect(tooLong.code == .valueTooLarge)
        #expect(tooLong.message.hasPrefix("At byte 20: String at \"/a/c\""), "\(tooLong.message.prefix(200))")
        // A null member's name is never checked (it writes nothing), as validation of the tree does.
        #expect(Self.assemble(try Self.stream(Array(#"{"a": 1, "b/c": null}"#.utf8), subtreeBytes: 1, maxChunk: 3, using: &random)) == json(#"{"a": 1}"#))
        // Too deep.
        let deep = String(repeating: #"{"k": "#, count: 33) + "1" + String(repeating: "}", count: 33)
        for subtreeBytes in [1, 1000] {
            let error = try #require(throws: CoreTreeError.self) { try Self.stream(Array(deep.utf8), subtreeBytes: subtreeBytes, maxChunk: 9, using: &random) }
            #expect(error.code == .pathTooDeep, "\(error)")
        }
    }

    @Test("damaged documents never crash the reader, and are refused whenever the whole parser refuses them", arguments: [31, 32, 33] as [UInt64])
    func garbage(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        for round in 0..<400 {
            await Task.yield()
            var bytes: [UInt8]
            if round % 10 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                    random.pick(Array(#"{}[]":,.-+0123456789eEtrufalsn \ "#.utf8) + [0x00, 0x80, 0xFF, 0xC3])
                }
            } else {
                let node = Gen.node(depth: Int.random(in: 1...4, using: &random), validKeys: true, using: &random)
                // No repeated names: a damaged value that a later one with the same name replaces
                // is refused by the stream reader (it cannot know what comes later) and
                // forgotten by the whole parser.
                bytes = Array(MessyJSON.write(node, repeats: false, using: &random).utf8)
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                    case 1: bytes.remove(at: at)
                    case 2: bytes.insert(random.pick(Array(#"{}[]":,\ "#.utf8)), at: at)
                    default: bytes.removeSubrange(at...)
                    }
                }
            }
            let whole = Result { () throws(CoreTreeError) -> Node in
                let node = try Node(json: bytes)
                try Validation.validateWrite(node, at: .root)
                return node
            }
            for subtreeBytes in [1, 16, 1 << 20] {
                let streamed = Result { () throws(CoreTreeError) in
                    Self.assemble(try Self.stream(bytes, subtreeBytes: subtreeBytes, maxChunk: 5, using: &random))
                }
                switch (whole, streamed) {
                case (.success(let expected), .success(let actual)):
                    #expect(actual == expected)
                case (.failure, .failure):
                    break
                default:
                    Issue.record("whole \(whole), streamed \(streamed), subtree \(subtreeBytes): \(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
    }

    @Test("a reader refuses input after an error, and after finish")
    func afterError() throws {
        var reader = JSONStreamReader()
        #expect(throws: CoreTreeError.self) { try reader.read(Array("[1,,".utf8)) + reader.finish() }
        #expect(throws: CoreTreeError.self) { try reader.read(Array("2]".utf8)) }
        var finished = JSONStreamReader()
        #expect(try finished.read(Array("1".utf8)).isEmpty)
        #expect(try finished.finish() == [JSONStreamItem(path: .root, node: num(1))])
        #expect(throws: CoreTreeError.self) { try finished.read(Array("2".utf8)) }
    }
}

/// JSON text for a tree written the ways people and other tools write it: members in any order,
/// repeated names (the last one wins), null members, `.value` wrappers, arrays with holes, and
/// white space anywhere.
enum MessyJSON {
    /// `node` as messy JSON; `repeats` allows repeated member names.
    static func write(_ node: Node, repeats: Bool = true, using random: inout some RandomNumberGenerator) -> String {
        var out = ""
        write(node, to: &out, junk: repeats, wrap: true, using: &random)
        return out
    }

    private static func space(_ random: inout some RandomNumberGenerator) -> String {
        random.chance(0.7) ? "" : random.pick([" ", "\n", "\t", "  \r\n "])
    }

    private static func quoted(_ key: String) -> String { Node(.string(key)).jsonString() }

    /// Writes `node`; `junk` allows repeated names (whose values are written without any),
    /// `wrap` a `.value` wrapper (not twice in a row).
    private static func write(_ node: Node, to out: inout String, junk: Bool, wrap: Bool, using random: inout some RandomNumberGenerator) {
        if node.isEmpty {
            out += random.pick(["null", "{}", "[]", #"{"gone": null}"#, "[null]"])
            return
        }
        var members: [(String, String)] = []
        if let leaf = node.leafValue {
            let text = Node(leaf).jsonString()
            guard node.priority != nil || random.chance(0.1) else {
                out += text
                return
            }
            members.append((".value", text))
        } else if node.isArrayLike, node.priority == nil, random.chance(0.5) {
            let count = node.children.last!.key.intValue! + 1
            out += "[" + space(&random)
            for index in 0..<count {
                if index > 0 { out += "," + space(&random) }
                let child = node.immediateChild(ChildKey(String(index)))
                if child.isEmpty { out += "null" } else { write(child, to: &out, junk: junk, wrap: true, using: &random) }
            }
            out += space(&random) + "]"
            return
        } else if wrap, random.chance(0.1) {
            var inner = ""
            write(node.withPriority(nil), to: &inner, junk: junk, wrap: false, using: &random)
            members.append((".value", inner))
        } else {
            for (key, child) in node.children {
                var text = ""
                write(child, to: &text, junk: junk, wrap: true, using: &random)
                members.append((key.stringValue, text))
            }
            members.shuffle(using: &random)
            // Repeated names before the member that wins, and null members.
            for _ in 0..<(junk ? Int.random(in: 0...2, using: &random) : 0) where !members.isEmpty {
                let winner = Int.random(in: 0..<members.count, using: &random)
                var loser = ""
                write(Gen.node(depth: 2, validKeys: true, using: &random), to: &loser, junk: false, wrap: true, using: &random)
                members.insert((members[winner].0, random.chance(0.3) ? "null" : loser), at: Int.random(in: 0...winner, using: &random))
            }
            if random.chance(0.2) { members.insert(("nothing\(Int.random(in: 0...9, using: &random))", "null"), at: Int.random(in: 0...members.count, using: &random)) }
        }
        if let priority = node.priority {
            let text = priority.node.jsonString()
            members.insert((".priority", text), at: Int.random(in: 0...members.count, using: &random))
        }
        out += "{" + space(&random)
        for (index, member) in members.enumerated() {
            if index > 0 { out += space(&random) + "," + space(&random) }
            out += quoted(member.0) + space(&random) + ":" + space(&random) + member.1
        }
        out += space(&random) + "}"
    }
}
