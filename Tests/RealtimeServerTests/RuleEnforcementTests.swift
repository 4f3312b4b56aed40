import Foundation
import Testing

/// The security rules on every path into the data: REST verbs and event streams, WebSocket
/// listens, gets and writes, and onDisconnect writes when registered and when they run.
@Suite("Rule enforcement")
struct RuleEnforcementTests {
    static let rules = """
    {"rules": {
      // readable and writable by anyone
      "public": {".read": true, ".write": true},
      "private": {".read": false, ".write": false},
      "ro": {".read": true},
      "numbers": {".read": true, ".write": true, ".validate": "newData.isNumber()"}
    }}
    """
    static let seed = #"{"public": {"a": 1}, "private": {"secret": "s"}, "ro": {"x": "kept"}, "numbers": 1}"#

    /// A server with the rules installed and the data seeded by the administrator.
    static func start() async throws -> (server: TestServer, base: String) {
        let server = try await TestServer.start()
        let base = server.baseURL
        let install = try await http("PUT", "\(base)/.settings/rules.json?ns=rules&auth=owner", body: rules)
        #expect(install.status == 200, "\(install.body)")
        #expect(try await http("PUT", "\(base)/.json?ns=rules&auth=owner", body: seed).status == 200)
        return (server, base)
    }

    static func adminRead(_ base: String, _ path: String) async throws -> String {
        try await http("GET", "\(base)/\(path).json?ns=rules&auth=owner").body
    }

    @Test("REST: each verb is judged; a denial is 401 {\"error\":\"Permission denied\"} and writes nothing")
    func rest() async throws {
        let (server, base) = try await Self.start()
        let denied = try await http("GET", "\(base)/private.json?ns=rules")
        #expect(denied.status == 401)
        #expect((denied.json as? [String: String])?["error"] == "Permission denied")
        #expect(try await http("GET", "\(base)/.json?ns=rules").status == 401, "rules are not filters")
        #expect(try await http("GET", "\(base)/public.json?ns=rules").body == #"{"a":1}"#)
        #expect(try await http("PUT", "\(base)/ro/x.json?ns=rules", body: #""changed""#).status == 401)
        #expect(try await http("POST", "\(base)/ro.json?ns=rules", body: "1").status == 401)
        #expect(try await http("DELETE", "\(base)/ro.json?ns=rules").status == 401)
        #expect(try await http("PATCH", "\(base)/.json?ns=rules", body: #"{"public/b": 2, "ro/y": 3}"#).status == 401,
                "a multi-path update is judged as a whole")
        #expect(try await Self.adminRead(base, "ro") == #"{"x":"kept"}"#)
        #expect(try await Self.adminRead(base, "public/b") == "null", "nothing of the refused update was written")
        #expect(try await http("PUT", "\(base)/numbers.json?ns=rules", body: #""text""#).status == 401, ".validate")
        #expect(try await http("PUT", "\(base)/numbers.json?ns=rules", body: "5").status == 200)
        #expect(try await http("PATCH", "\(base)/public.json?ns=rules", body: #"{"b": 2}"#).status == 200)
        let stream = try await http("GET", "\(base)/private.json?ns=rules", headers: ["Accept": "text/event-stream"])
        #expect(stream.status == 401, "an event stream is refused before it starts")
        await server.stop()
    }

    @Test("rules endpoint: admins only; a bad document is a located 400 and changes nothing; strict format")
    func rulesEndpoint() async throws {
        let (server, base) = try await Self.start()
        #expect(try await http("GET", "\(base)/.settings/rules.json?ns=rules").status == 401)
        #expect(try await http("PUT", "\(base)/.settings/rules.json?ns=rules", body: #"{"rules": {".read": true}}"#).status == 401)
        let installed = try await http("GET", "\(base)/.settings/rules.json?ns=rules&auth=owner")
        #expect(installed.body.contains("// readable and writable by anyone"), "the rules come back as installed, comments kept")
        let strict = try await http("GET", "\(base)/.settings/rules.json?ns=rules&auth=owner&format=strict")
        #expect(strict.json != nil && !strict.body.contains("//"), "\(strict.body)")
        let bad = try await http("PUT", "\(base)/.settings/rules.json?ns=rules&auth=owner", body: "{\"rules\": {\n  \".read\": \"auth.uid ==\"\n}}")
        #expect(bad.status == 400)
        #expect(bad.body.contains("line 2, column"), "\(bad.body)")
        #expect(try await http("GET", "\(base)/public.json?ns=rules").status == 200, "the old rules still apply")
        // New rules apply to the next request at once.
        #expect(try await http("PUT", "\(base)/.settings/rules.json?ns=rules&auth=owner", body: #"{"rules": {}}"#).status == 200)
        #expect(try await http("GET", "\(base)/public.json?ns=rules").status == 401)
        await server.stop()
    }

    @Test("WebSocket: listen, get, put, merge, compare-and-put and onDisconnect are judged")
    func webSocket() async throws {
        let (server, base) = try await Self.start()
        let client = WireClient(port: server.port, namespace: "rules")
        func status(_ action: String, _ body: String) async throws -> String? {
            try await client.request(action, body)["s"] as? String
        }
        #expect(try await status("q", #"{"p":"/private","h":""}"#) == "permission_denied")
        #expect(try await status("q", #"{"p":"/public","h":""}"#) == "ok")
        #expect(try await status("g", #"{"p":"/private","q":{}}"#) == "permission_denied")
        #expect(try await status("p", #"{"p":"/ro/x","d":"changed"}"#) == "permission_denied")
        #expect(try await status("m", #"{"p":"/","d":{"public/c":1,"ro/y":2}}"#) == "permission_denied")
        #expect(try await status("p", #"{"p":"/ro/x","d":"changed","h":"whatever"}"#) == "permission_denied")
        #expect(try await status("o", #"{"p":"/ro/x","d":"gone"}"#) == "permission_denied", "judged when registered")
        #expect(try await status("o", #"{"p":"/public/flag","d":"bye"}"#) == "ok")
        #expect(try await status("o", #"{"p":"/public/other","d":"bye"}"#) == "ok")
        #expect(try await status("p", #"{"p":"/public/a","d":2}"#) == "ok")
        // The rules change before the connection ends: /public/flag may no longer be written.
        let stricter = #"{"rules": {"public": {".read": true, "other": {".write": true}}}}"#
        #expect(try await http("PUT", "\(base)/.settings/rules.json?ns=rules&auth=owner", body: stricter).status == 200)
        await client.close()
        #expect(try await eventually { try await Self.adminRead(base, "public/other") == #""bye""# })
        #expect(try await Self.adminRead(base, "public/flag") == "null", "judged again when it runs: dropped")
        #expect(try await Self.adminRead(base, "ro/x") == #""kept""#)
        await server.stop()
    }

    @Test("new rules revoke the listens they no longer allow: a c push on WebSocket, a cancel event on a stream")
    func rulesChangeRevokesListens() async throws {
        let (server, base) = try await Self.start()
        let user = WireClient(port: server.port, namespace: "rules")
        #expect(try await user.request("q", #"{"p":"/public","h":""}"#)["s"] as? String == "ok")
        #expect(try await user.request("q", #"{"p":"/ro","h":""}"#)["s"] as? String == "ok")
        let admin = WireClient(port: server.port, namespace: "rules")
        #expect(try await admin.request("auth", #"{"cred":"owner"}"#)["s"] as? String == "ok")
        #expect(try await admin.request("q", #"{"p":"/public","h":""}"#)["s"] as? String == "ok")
        let stream = try await EventStreamSocket(port: server.port, path: "/public", namespace: "rules")
        let closed = #"{"rules": {"ro": {".read": true}}}"#
        #expect(try await http("PUT", "\(base)/.settings/rules.json?ns=rules&auth=owner", body: closed).status == 200)
        let revoked = try await user.first { ($0["d"] as? [String: Any])?["a"] as? String == "c" }
        #expect(((revoked["d"] as? [String: Any])?["b"] as? [String: Any])?["p"] as? String == "public")
        let tail = try await stream.readToEnd(timeout: .seconds(10))
        #expect(tail.contains("event: cancel"), "\(tail)")
        // The listen that is still allowed keeps its updates; the administrator's is never revoked.
        #expect(try await http("PUT", "\(base)/ro/x.json?ns=rules&auth=owner", body: #""new""#).status == 200)
        #expect(try await http("PUT", "\(base)/public/a.json?ns=rules&auth=owner", body: "9").status == 200)
        _ = try await user.first { (($0["d"] as? [String: Any])?["b"] as? [String: Any])?["p"] as? String == "ro/x" }
        _ = try await admin.first { (($0["d"] as? [String: Any])?["b"] as? [String: Any])?["p"] as? String == "public/a" }
        let revocations = await user.pushes().filter { $0.action == "c" }
        #expect(revocations.count == 1, "only the listen the rules no longer allow is revoked")
        await user.close()
        await admin.close()
        await server.stop()
    }

    @Test("a listen ordered by an unindexed child or value is served with the no_index warning; .indexOn silences it")
    func noIndexWarning() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        let client = WireClient(port: server.port, namespace: "index")
        func warnings(_ body: String) async throws -> [String]? {
            let reply = try await client.request("q", body)
            #expect(reply["s"] as? String == "ok")
            return (reply["d"] as? [String: Any])?["w"] as? [String]
        }
        #expect(try await warnings(#"{"p":"/dinos","q":{"i":"height"},"t":1,"h":""}"#) == ["no_index"])
        #expect(try await warnings(#"{"p":"/scores","q":{"i":".value","l":3,"vf":"r"},"t":2,"h":""}"#) == ["no_index"])
        #expect(try await warnings(#"{"p":"/dinos","q":{"i":".key","l":3,"vf":"l"},"t":3,"h":""}"#) == nil, "key order needs no index")
        #expect(try await warnings(#"{"p":"/plain","h":""}"#) == nil)
        let indexed = #"{"rules": {".read": true, ".write": true, "dinos": {".indexOn": ["height"]}, "scores": {".indexOn": ".value"}}}"#
        #expect(try await http("PUT", "\(base)/.settings/rules.json?ns=index&auth=owner", body: indexed).status == 200)
        #expect(try await warnings(#"{"p":"/dinos","q":{"i":"height","l":2,"vf":"l"},"t":4,"h":""}"#) == nil)
        #expect(try await warnings(#"{"p":"/scores","q":{"i":".value","l":2,"vf":"l"},"t":5,"h":""}"#) == nil)
        #expect(try await warnings(#"{"p":"/dinos","q":{"i":"weight"},"t":6,"h":""}"#) == ["no_index"])
        await client.close()
        await server.stop()
    }

    @Test("the administrator (owner on loopback) is not bound by the rules")
    func adminBypasses() async throws {
        let (server, base) = try await Self.start()
        #expect(try await Self.adminRead(base, "private/secret") == #""s""#)
        let admin = WireClient(port: server.port, namespace: "rules")
        #expect(try await admin.request("auth", #"{"cred":"owner"}"#)["s"] as? String == "ok")
        #expect(try await admin.request("p", #"{"p":"/private/secret","d":"t"}"#)["s"] as? String == "ok")
        await admin.close()
        #expect(try await Self.adminRead(base, "private/secret") == #""t""#)
        // An administrator may act as a user (authvar) or as nobody (noauth): then the rules apply.
        let actingAsUser = WireClient(port: server.port, namespace: "rules")
        #expect(try await actingAsUser.request("gauth", #"{"cred":"owner","authvar":{"uid":"u1"}}"#)["s"] as? String == "ok")
        #expect(try await actingAsUser.request("g", #"{"p":"/private","q":{}}"#)["s"] as? String == "permission_denied")
        #expect(try await actingAsUser.request("auth", #"{"cred":"owner","noauth":true}"#)["s"] as? String == "ok")
        #expect(try await actingAsUser.request("p", #"{"p":"/private/secret","d":"u"}"#)["s"] as? String == "permission_denied")
        await actingAsUser.close()
        await server.stop()
    }
}
