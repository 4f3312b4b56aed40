import CoreTree
import Foundation
import Testing

/// REST bodies larger than the stream reader's window. CPU-heavy in a debug build (megabytes
/// parsed, stored, read back and compared), so `Tools/test` runs this suite beside the import
/// processes, not among the socket suites whose real-time waits it would starve.
@Suite("REST: large bodies")
struct LargeBodyTests {
    @Test("Bodies of several megabytes, parsed as they arrive, write what small ones write: PUT with priorities, PATCH with nulls")
    func largeBodies() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        // 3,000 rooms of ~600 bytes each: larger than the reader's 1 MiB window, so it comes member by member.
        var rooms: [(key: ChildKey, value: Node)] = []
        for index in 0..<2_000 {
            let text = String(repeating: "m\(index % 10)", count: 300)
            rooms.append((ChildKey("r\(index)"), Node(children: [(ChildKey("text"), Node(.string(text))), (ChildKey("n"), Node(.number(Double(index))))],
                                                    priority: index % 3 == 0 ? .number(Double(index)) : nil)))
        }
        let big = Node(children: rooms)
        let body = big.jsonString(format: .export)
        #expect(body.utf8.count > 1 << 20)  // more than the reader's window
        #expect(try await http("PUT", "\(base)/big.json?print=silent", body: body).status == 204)
        #expect(try Node(jsonString: try await http("GET", "\(base)/big.json?format=export").body) == big)
        // A PATCH of 1,000 paths: half replace a room's text, a quarter remove a room, a quarter add one.
        var members: [String] = []
        var expected = big
        for index in 0..<1_000 {
            let text = String(repeating: "p", count: 1_500)
            switch index % 4 {
            case 0, 1:
                members.append(#""r\#(index)/text":"\#(text)""#)
                expected = expected.updatingChild(at: TreePath(unchecked: "r\(index)/text"), to: Node(.string(text)))
            case 2:
                members.append(#""r\#(index)":null"#)
                expected = expected.updatingChild(at: TreePath(unchecked: "r\(index)"), to: .empty)
            default:
                members.append(#""new\#(index)":{"text":"\#(text)"}"#)
                expected = expected.updatingChild(at: TreePath(unchecked: "new\(index)/text"), to: Node(.string(text)))
            }
        }
        let patch = "{" + members.joined(separator: ",") + "}"
        #expect(patch.utf8.count > 1 << 20)
        #expect(try await http("PATCH", "\(base)/big.json?print=silent", body: patch).status == 204)
        #expect(try Node(jsonString: try await http("GET", "\(base)/big.json?format=export").body) == expected)
        // A large body with a bad key deep inside is refused whole, naming its byte; nothing changes.
        let bad = String(body.dropLast()) + #","zz":{"a.b":1}}"#
        let refused = try await http("PUT", "\(base)/big.json", body: bad)
        #expect(refused.status == 400)
        #expect(((refused.json as? [String: Any])?["error"] as? String)?.contains("At byte") == true)
        #expect(try Node(jsonString: try await http("GET", "\(base)/big.json?format=export").body) == expected)
        await server.stop()
    }
}
