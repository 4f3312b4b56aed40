import Testing
import TestSupport
@testable import CoreTree

/// The reader of updates (REST PATCH bodies): an object of paths to values, cut into chunks at
/// random places and read with random subtree sizes, must give every member's value as the whole
/// parser reads it, nulls and repeated paths included.
@Suite("JSON stream reader: updates")
struct JSONStreamReaderUpdateTests {
    static func members(
        _ text: String, subtreeBytes: Int, maxChunk: Int, using random: inout some RandomNumberGenerator
    ) throws(CoreTreeError) -> [(name: String, node: Node)] {
        let bytes = Array(text.utf8)
        var reader = JSONStreamReader.update(subtreeBytes: subtreeBytes)
        var update = JSONUpdateAssembler()
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 1...max(1, maxChunk), using: &random))
            update.add(try reader.read(bytes[start..<end]))
            start = end
        }
        update.add(try reader.finish())
        return update.members
    }

    @Test("random updates give each path's value as the whole parser reads it", arguments: [41, 42, 43] as [UInt64])
    func randomUpdates(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<150 {
            await Task.yield()
            var written: [(name: String, json: String)] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let name = random.pick(["a", "a/b", "rooms/r1/messages", "x/y/z", "n1", ".priority"])
                // A `.priority` member holds a priority (anything else is refused: see `refused`).
                let value = random.pick([0, 1, 2]) == 0
                    ? "null"
                    : name == ".priority"
                    ? random.pick(["1.5", #""p""#, "-3", #"{".sv": "timestamp"}"#])
                    : Gen.node(depth: Int.random(in: 0...4, using: &random), maxWidth: 6, validKeys: true, using: &random)
                        .jsonString(format: random.pick([JSONFormat.export, .plain]))
                written.append((name, value))
            }
            let text = "{" + written.map { "\(Node(.string($0.name)).jsonString()): \($0.json)" }.joined(separator: ", ") + "}"
            // Expected: first appearance orders the names, the last value wins.
            var order: [String] = []
            var expected: [String: Node] = [:]
            for member in written {
                if expected.updateValue(try Node(jsonString: member.json), forKey: member.name) == nil { order.append(member.name) }
            }
            for subtreeBytes in [1, 7, 60, 1 << 20] {
                let members = try Self.members(text, subtreeBytes: subtreeBytes, maxChunk: random.pick([1, 5, 50, 1 << 20]), using: &random)
                #expect(members.map(\.name) == order, "subtree \(subtreeBytes): \(text)")
                for member in members {
                    #expect(member.node == expected[member.name], "\(member.name) at subtree \(subtreeBytes): \(text)")
                }
            }
        }
    }

    @Test("a .priority member holds a number, a string, a server value or null")
    func priorityMembers() throws {
        var random = SplitMix64(seed: 4)
        let members = try Self.members(#"{".priority": 5, "a/.priority": "x", "b/.priority": null, "c/.priority": {".sv": "timestamp"}}"#,
                                       subtreeBytes: 1, maxChunk: 3, using: &random)
        #expect(members.map(\.name) == [".priority", "a/.priority", "b/.priority", "c/.priority"])
        #expect(members[0].node == Node(.number(5)) && members[1].node == Node(.string("x")) && members[2].node.isEmpty)
    }

    @Test("a null member is a removal, also among large ones")
    func nulls() throws {
        var random = SplitMix64(seed: 1)
        let members = try Self.members(#"{"a/b": null, "c": {"d": 1, "e": "x"}, "f": null}"#, subtreeBytes: 1, maxChunk: 3, using: &random)
        #expect(members.map(\.name) == ["a/b", "c", "f"])
        #expect(members[0].node.isEmpty && members[2].node.isEmpty)
        #expect(members[1].node == (try Node(jsonString: #"{"d": 1, "e": "x"}"#)))
    }

    @Test("an update that is not an object, or names a bad path, is refused at its byte", arguments: [
        ("[1, 2]", CoreTreeError.Code.invalidValue, 0),
        ("  5", .invalidValue, 2),
        (#"{"a": 1, "b#c": 2}"#, .invalidPath, 9),
        (#"{"a": 1, "b[": 2}"#, .invalidPath, 9),
        // Found by fuzz-json: a priority that is not one was accepted, and the write removed the priority there.
        (#"{".priority": true}"#, .invalidPriority, 14),
        (#"{"a": 1, "a/.priority": {"k": 1}}"#, .invalidPriority, 24),
        (#"{"a/.priority": [1]}"#, .invalidPriority, 16),
    ] as [(String, CoreTreeError.Code, Int)])
    func refused(_ text: String, code: CoreTreeError.Code, byte: Int) throws {
        for subtreeBytes in [1, 1 << 20] {
            var random = SplitMix64(seed: 2)
            #expect {
                _ = try Self.members(text, subtreeBytes: subtreeBytes, maxChunk: 4, using: &random)
            } throws: { error in
                guard let error = error as? CoreTreeError else { return false }
                return error.code == code && error.message.hasPrefix("At byte \(byte):")
            }
        }
    }

    @Test("keys below a member's path are checked as keys")
    func nestedKeys() throws {
        var random = SplitMix64(seed: 3)
        #expect(throws: CoreTreeError.self) {
            _ = try Self.members(#"{"a/b": {"c/d": 1}}"#, subtreeBytes: 1, maxChunk: 100, using: &random)
        }
        #expect(throws: CoreTreeError.self) {
            _ = try Self.members(#"{"a/b": {"c/d": 1}}"#, subtreeBytes: 1 << 20, maxChunk: 100, using: &random)
        }
    }
}
