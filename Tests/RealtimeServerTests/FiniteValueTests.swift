import Foundation
import Testing

/// Values are finite everywhere: an increment whose sum overflows is refused at every entry
/// point, changes nothing, and the namespace still loads after a restart.
@Suite("Finite values")
struct FiniteValueTests {
    private static let overflow = #"{".sv":{"increment":1e308}}"#

    private static func isLargest(_ reply: HTTPReply) -> Bool {
        reply.status == 200 && (reply.json as? Double) == 1e308
    }

    @Test("REST PUT and PATCH of an overflowing increment get 400, write nothing, and the store reloads")
    func rest() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-finite-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await TestServer.start(backend: "sqlite", directory: directory)
        let base = "\(server.baseURL)"
        #expect(try await http("PUT", "\(base)/n.json?ns=test", body: "1e308").status == 200)
        let put = try await http("PUT", "\(base)/n.json?ns=test", body: Self.overflow)
        #expect(put.status == 400)
        #expect(put.body.contains("overflows"), "\(put.body)")
        #expect(try await http("PATCH", "\(base)/.json?ns=test", body: #"{"n":\#(Self.overflow)}"#).status == 400)
        #expect(try await http("PATCH", "\(base)/deep.json?ns=test", body: #"{"a/b":1e308}"#).status == 200)
        #expect(try await http("PUT", "\(base)/deep/a.json?ns=test", body: #"{"b":\#(Self.overflow),"c":1}"#).status == 400)
        #expect(Self.isLargest(try await http("GET", "\(base)/n.json?ns=test")))
        #expect(try await http("GET", "\(base)/deep/a/c.json?ns=test").body == "null", "nothing of a refused write is kept")
        // An increment that stays finite still works.
        #expect(try await http("PUT", "\(base)/m.json?ns=test", body: #"{".sv":{"increment":1}}"#).status == 200)
        await server.stop()
        let again = try await TestServer.start(backend: "sqlite", directory: directory)
        #expect(Self.isLargest(try await http("GET", "\(again.baseURL)/n.json?ns=test")), "the namespace loads after a restart")
        #expect(try await http("GET", "\(again.baseURL)/.json?ns=test").status == 200)
        await again.stop()
    }

    @Test("WebSocket put and merge of an overflowing increment get invalid_args; an onDisconnect one fails when it fires, alone")
    func webSocketAndOnDisconnect() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        #expect(try await client.request("p", #"{"p":"/w","d":1e308}"#)["s"] as? String == "ok")
        #expect(try await client.request("p", #"{"p":"/w","d":\#(Self.overflow)}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("m", #"{"p":"/","d":{"w":\#(Self.overflow)}}"#)["s"] as? String == "invalid_args")
        // Registered fine (the data may change before it fires); refused when it fires.
        #expect(try await client.request("o", #"{"p":"/w","d":\#(Self.overflow)}"#)["s"] as? String == "ok")
        #expect(try await client.request("o", #"{"p":"/marker","d":"fired"}"#)["s"] as? String == "ok")
        await client.close()
        #expect(try await eventually { try await http("GET", "\(server.baseURL)/marker.json?ns=test").body == "\"fired\"" })
        #expect(Self.isLargest(try await http("GET", "\(server.baseURL)/w.json?ns=test")))
        let reader = WireClient(port: server.port)
        #expect(try await reader.request("g", #"{"p":"/w","q":{}}"#)["d"] as? Double == 1e308)
        await reader.close()
        await server.stop()
    }
}
