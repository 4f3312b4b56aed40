import Foundation
import Testing

/// A write to a `.priority` path sets the priority there. A value that cannot be a priority was
/// taken as "no priority": the write succeeded and silently removed the priority (fuzz-json found
/// the update form). Every entry point now refuses it and changes nothing.
@Suite("Priority writes")
struct PriorityWriteTests {
    @Test("REST PUT and PATCH of a value that is not a priority get 400 and keep the priority; valid ones set it")
    func rest() async throws {
        let server = try await TestServer.start()
        let base = "\(server.baseURL)"
        #expect(try await http("PUT", "\(base)/x.json?ns=test", body: #"{"a":1,".priority":5}"#).status == 200)
        for (method, path, body) in [
            ("PUT", "x/.priority", "true"), ("PUT", "x/.priority", #"{"k":1}"#), ("PATCH", "x", #"{".priority":true}"#),
            ("PATCH", "", #"{"x/.priority":[1]}"#),
        ] {
            let reply = try await http(method, "\(base)/\(path).json?ns=test", body: body)
            #expect(reply.status == 400, "\(method) /\(path) \(body): \(reply.status) \(reply.body)")
            #expect(reply.body.contains("priority"), "\(reply.body)")
        }
        let kept = try await http("GET", "\(base)/x.json?ns=test&format=export")
        #expect(kept.body == #"{".priority":5,"a":1}"# || kept.body == #"{"a":1,".priority":5}"#, "the priority is kept: \(kept.body)")
        #expect(try await http("PATCH", "\(base)/x.json?ns=test", body: #"{".priority":"p"}"#).status == 200)
        #expect(try await http("GET", "\(base)/x/.priority.json?ns=test").body == #""p""#)
        #expect(try await http("PUT", "\(base)/x/.priority.json?ns=test", body: "null").status == 200)
        #expect(try await http("GET", "\(base)/x.json?ns=test&format=export").body == #"{"a":1}"#, "null removes it")
        await server.stop()
    }

    @Test("a WebSocket put or merge of a value that is not a priority gets invalid_args")
    func webSocket() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        #expect(try await client.request("p", #"{"p":"/y","d":{"a":1,".priority":2}}"#)["s"] as? String == "ok")
        #expect(try await client.request("p", #"{"p":"/y/.priority","d":true}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("m", #"{"p":"/y","d":{".priority":{"k":1}}}"#)["s"] as? String == "invalid_args")
        await client.close()
        #expect(try await http("GET", "\(server.baseURL)/y/.priority.json?ns=test").body == "2", "the priority is kept")
        await server.stop()
    }
}
