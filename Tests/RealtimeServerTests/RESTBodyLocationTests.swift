import CoreTree
import Foundation
import Testing

/// A REST body's data is checked once, by the reader that parses it as it arrives, where it is
/// written: the database then checks only the paths. These requests are fine relative to the
/// body and break a limit only counted from the URL's location.
@Suite("REST: bodies checked where they are written")
struct RESTBodyLocationTests {
    /// A location `levels` keys deep: `/l1/l2/...`.
    private static func location(_ levels: Int) -> String { (1...levels).map { "l\($0)" }.joined(separator: "/") }

    @Test("Depth and length limits count the URL's path for PUT and PATCH; overlapping PATCH paths stay refused; nothing is written")
    func limitsCountTheLocation() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        let deep = RESTBodyLocationTests.location(30)

        // 30 levels + b/c/d = 33 > 32.
        let put = try await http("PUT", "\(base)/\(deep).json", body: #"{"b":{"c":{"d":1}}}"#)
        #expect(put.status == 400)
        #expect(((put.json as? [String: Any])?["error"] as? String)?.contains("at most 32") == true)
        let patch = try await http("PATCH", "\(base)/\(deep).json", body: #"{"b/c":{"d":1}}"#)
        #expect(patch.status == 400)
        #expect(((patch.json as? [String: Any])?["error"] as? String)?.contains("at most 32") == true)

        // A location key of 700 bytes and a member of 80: past 768 bytes only together.
        let longKey = String(repeating: "k", count: 700)
        let member = String(repeating: "m", count: 80)
        let long = try await http("PATCH", "\(base)/\(longKey).json", body: #"{"\#(member)":1}"#)
        #expect(long.status == 400)
        #expect(((long.json as? [String: Any])?["error"] as? String)?.contains("bytes long") == true)
        let longPut = try await http("PUT", "\(base)/\(longKey).json", body: #"{"\#(member)":1}"#)
        #expect(longPut.status == 400)

        // The paths of an update are still checked by the database.
        let overlapping = try await http("PATCH", "\(base)/safe.json", body: #"{"a":1,"a/b":2}"#)
        #expect(overlapping.status == 400)
        #expect(((overlapping.json as? [String: Any])?["error"] as? String)?.contains("ancestor") == true)
        let info = try await http("PATCH", "\(base)/.info.json", body: #"{"connected":true}"#)
        #expect(info.status != 200)

        // Nothing of the refused writes is there.
        #expect(try await http("GET", "\(base)/l1.json").body == "null")
        #expect(try await http("GET", "\(base)/\(longKey).json").body == "null")
        #expect(try await http("GET", "\(base)/safe.json").body == "null")

        // At the limit exactly: 29 levels + b/c/d = 32 is written, by PUT and by PATCH.
        let edge = RESTBodyLocationTests.location(29)
        #expect(try await http("PUT", "\(base)/\(edge).json", body: #"{"b":{"c":{"d":1}}}"#).status == 200)
        #expect(try await http("PATCH", "\(base)/\(edge).json", body: #"{"b/c":{"e":2}}"#).status == 200)
        #expect(try Node(jsonString: try await http("GET", "\(base)/\(edge)/b.json").body) == Node(children: ["c": Node(children: ["e": Node(.number(2))])]))
        await server.stop()
    }
}
