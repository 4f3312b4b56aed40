import CoreTree
import Foundation
import Testing

/// The REST API end to end.
@Suite("REST API")
struct RESTTests {
    @Test("PUT, GET, PATCH (multi-path, null removes), POST (push id), DELETE; print=silent, format=export, shallow")
    func crud() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        let put = try await http("PUT", "\(base)/users/ada.json?ns=rest", body: #"{"name":"Ada","born":1815,"tags":{"a":true}}"#)
        #expect(put.status == 200)
        #expect((put.json as? [String: Any])?["born"] as? Int == 1815)
        let patch = try await http("PATCH", "\(base)/users.json?ns=rest", body: #"{"ada/name":"Ada L.","ada/tags":null,"bob":{"name":"Bob"}}"#)
        #expect(patch.status == 200)
        let users = try await http("GET", "\(base)/users.json?ns=rest").json as? [String: Any]
        #expect((users?["ada"] as? [String: Any])?["name"] as? String == "Ada L.")
        #expect((users?["ada"] as? [String: Any])?["tags"] == nil)
        #expect((users?["bob"] as? [String: Any])?["name"] as? String == "Bob")
        let post = try await http("POST", "\(base)/log.json?ns=rest", body: #""first""#)
        let name = try #require((post.json as? [String: Any])?["name"] as? String)
        #expect(name.count == 20)
        #expect(try await http("GET", "\(base)/log/\(name).json?ns=rest").json as? String == "first")
        let silent = try await http("PUT", "\(base)/quiet.json?ns=rest&print=silent", body: "1")
        #expect(silent.status == 204 && silent.body.isEmpty)
        _ = try await http("PUT", "\(base)/prio.json?ns=rest", body: #"{".value":3,".priority":2}"#)
        #expect(try await http("GET", "\(base)/prio.json?ns=rest&format=export").body == #"{".value":3,".priority":2}"#)
        #expect(try await http("GET", "\(base)/prio.json?ns=rest").body == "3")
        let shallow = try await http("GET", "\(base)/users.json?ns=rest&shallow=true").json as? [String: Any]
        #expect(shallow?["ada"] as? Bool == true && shallow?["bob"] as? Bool == true)
        #expect(try await http("DELETE", "\(base)/users/bob.json?ns=rest").body == "null")
        #expect(try await http("GET", "\(base)/users/bob.json?ns=rest").body == "null")
        // Namespaces are separate trees; no ns means the default one.
        #expect(try await http("GET", "\(base)/users.json").body == "null")
        await server.stop()
    }

    @Test("ETags: X-Firebase-ETag, if-match (412 with current ETag and value), null_etag, if-none-match (304)")
    func etags() async throws {
        let server = try await TestServer.start()
        let url = "\(server.baseURL)/doc.json?ns=etag"
        let create = try await http("PUT", url, body: #"{"v":1}"#, headers: ["if-match": "null_etag"])
        #expect(create.status == 200)
        let again = try await http("PUT", url, body: #"{"v":9}"#, headers: ["if-match": "null_etag"])
        #expect(again.status == 412)
        #expect((again.json as? [String: Any])?["v"] as? Int == 1)
        let read = try await http("GET", url, headers: ["X-Firebase-ETag": "true"])
        let etag = try #require(read.header("ETag"))
        #expect(etag == again.header("ETag"))
        let update = try await http("PUT", url, body: #"{"v":2}"#, headers: ["if-match": etag])
        #expect(update.status == 200)
        #expect(update.header("ETag") != etag)
        let stale = try await http("PUT", url, body: #"{"v":3}"#, headers: ["if-match": etag])
        #expect(stale.status == 412)
        let unchanged = try await http("GET", url, headers: ["if-none-match": try #require(update.header("ETag"))])
        #expect(unchanged.status == 304)
        let changed = try await http("GET", url, headers: ["if-none-match": etag])
        #expect(changed.status == 200 && changed.header("ETag") == update.header("ETag"))
        #expect(try await http("GET", "\(server.baseURL)/missing.json?ns=etag", headers: ["X-Firebase-ETag": "true"]).header("ETag") == "null_etag")
        await server.stop()
    }

    @Test("Queries: orderBy child (ties by key), $key ranges, $value limits, equalTo, and a filter without orderBy is a 400")
    func queries() async throws {
        let server = try await TestServer.start()
        let base = "\(server.baseURL)/dinos.json?ns=q"
        _ = try await http("PUT", base, body: #"{"bruhathkayosaurus":{"height":25},"lambeosaurus":{"height":2.1},"linhenykus":{"height":0.6},"pterodactyl":{"height":0.6},"stegosaurus":{"height":4},"triceratops":{"height":3}}"#)
        let shortest = try await http("GET", base + "&orderBy=%22height%22&limitToFirst=2").json as? [String: Any]
        #expect(shortest.map { Set($0.keys) } == ["linhenykus", "pterodactyl"])
        let byKey = try await http("GET", base + #"&orderBy="$key"&startAt="l"&endAt="p""#.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!).json as? [String: Any]
        #expect(byKey.map { Set($0.keys) } == ["lambeosaurus", "linhenykus"])
        let exact = try await http("GET", base + "&orderBy=%22height%22&equalTo=0.6").json as? [String: Any]
        #expect(exact?.count == 2)
        _ = try await http("PUT", "\(server.baseURL)/nums.json?ns=q", body: #"{"a":5,"b":1,"c":9,"d":7}"#)
        let top = try await http("GET", "\(server.baseURL)/nums.json?ns=q&orderBy=%22$value%22&limitToLast=2").json as? [String: Any]
        #expect(top.map { Set($0.keys) } == ["c", "d"])
        let bad = try await http("GET", base + "&limitToFirst=2")
        #expect(bad.status == 400)
        #expect((bad.json as? [String: Any])?["error"] as? String == "orderBy must be defined when other query parameters are defined")
        await server.stop()
    }

    @Test("Bad input: invalid JSON, keys, paths, depth, strings over 10 MB; each a 400 and nothing written")
    func badInput() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        _ = try await http("PUT", "\(base)/safe.json", body: #""kept""#)
        let cases: [(String, String)] = [
            ("/safe.json", "{not json"),
            ("/safe.json", #"{"a.b":1}"#),
            ("/safe.json", #"{"a":{"$x":1}}"#),
            ("/sa[fe.json", "1"),
            ("/safe.json", String(repeating: "{\"k\":", count: 40) + "1" + String(repeating: "}", count: 40)),
            ("/safe.json", "\"" + String(repeating: "x", count: 10 * 1024 * 1024 + 1) + "\""),
        ]
        for (path, body) in cases {
            let reply = try await http("PUT", base + path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!, body: body)
            #expect(reply.status == 400, "\(path) \(body.prefix(40)) gave \(reply.status)")
            #expect((reply.json as? [String: Any])?["error"] is String)
        }
        #expect(try await http("GET", "\(base)/safe.json").body == #""kept""#)
        #expect(try await http("GET", "\(base)/no-suffix").status == 400)
        await server.stop()
    }

    @Test("A path or query parameter that does not percent-decode to UTF-8 is a 400 and writes nothing")
    func badPercentEncoding() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        for path in ["/bad%FF.json", "/bad%C3.json", "/bad%ED%A0%80.json"] {
            let reply = try await http("PUT", base + path, body: "1")
            #expect(reply.status == 400, "\(path) gave \(reply.status)")
            #expect(((reply.json as? [String: Any])?["error"] as? String)?.contains("not UTF-8") == true, "\(reply.body)")
        }
        let query = try await http("GET", "\(base)/a.json?orderBy=%22%FF%22")
        #expect(query.status == 400, "\(query.body)")
        #expect(try await http("GET", "\(base)/.json").body == "null")
        await server.stop()
    }

    @Test("/.settings/rules.json is admin only: Bearer owner on a loopback server")
    func rulesSettings() async throws {
        let server = try await TestServer.start()
        let url = "\(server.baseURL)/.settings/rules.json?ns=r"
        let denied = try await http("GET", url)
        #expect(denied.status == 401)
        #expect((denied.json as? [String: Any])?["error"] as? String == "Permission denied")
        let rules = #"{"rules":{".read":"auth != null",".write":false}}"#
        #expect(try await http("PUT", url, body: rules, headers: ["Authorization": "Bearer owner"]).status == 200)
        #expect(try await http("GET", url, headers: ["Authorization": "Bearer owner"]).body == rules)
        #expect(try await http("PUT", url, body: "[1]", headers: ["Authorization": "Bearer owner"]).status == 400)
        await server.stop()
    }

    @Test("Streaming: the first event is a put of the whole location, then puts and patches with relative paths")
    func eventStream() async throws {
        let server = try await TestServer.start(keepAlive: .milliseconds(200))
        _ = try await http("PUT", "\(server.baseURL)/feed.json?ns=s", body: #"{"a":1}"#)
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-sN", "-H", "Accept: text/event-stream", "\(server.baseURL)/feed.json?ns=s"]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        defer { curl.terminate() }
        let received = Collected()
        output.fileHandleForReading.readabilityHandler = { handle in received.append(handle.availableData) }
        #expect(try await eventually { received.text.contains(#"data: {"path":"/","data":{"a":1}}"#) })
        _ = try await http("PUT", "\(server.baseURL)/feed/b.json?ns=s", body: #""x""#)
        _ = try await http("PATCH", "\(server.baseURL)/feed.json?ns=s", body: #"{"c/d":2}"#)
        #expect(try await eventually { received.text.contains("event: put\ndata: {\"path\":\"/b\",\"data\":\"x\"}") })
        #expect(try await eventually { received.text.contains("event: patch\ndata: {\"path\":\"/\",\"data\":{\"c/d\":2}}") })
        #expect(try await eventually { received.text.contains("event: keep-alive\ndata: null") })
        output.fileHandleForReading.readabilityHandler = nil
        await server.stop()
    }
}

/// Bytes collected from a pipe on another thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) {
        lock.lock()
        data.append(more)
        lock.unlock()
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite("REST: errors a client sees")
struct RESTErrorTextTests {
    @Test("A namespace whose store cannot open answers 503 with a reason that names no path or system text")
    func unopenableNamespaceHidesPaths() async throws {
        // The namespace's directory is a regular file, so its store cannot be made.
        let blocker = NSTemporaryDirectory() + "rtdb-blocker-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: blocker + "/test"))
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        let server = try await TestServer.start(backend: "sqlite", directory: blocker)
        let reply = try await http("GET", "\(server.baseURL)/a.json?ns=test")
        #expect(reply.status == 503)
        #expect(reply.body.contains("cannot be opened"), "\(reply.body)")
        #expect(!reply.body.contains(blocker) && !reply.body.contains("/tmp"), "a path leaked: \(reply.body)")
        await server.stop()
    }
}

@Suite("REST: server values")
struct RESTServerValueTests {
    @Test("a server value keeps the priority written beside it, over REST and WebSocket")
    func serverValueKeepsItsPriority() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        #expect(try await http("PUT", "\(base)/t.json?ns=test", body: #"{".value": {".sv": "timestamp"}, ".priority": 5}"#).status == 200)
        let stored = try await http("GET", "\(base)/t.json?ns=test&format=export").json as? [String: Any]
        #expect(stored?[".priority"] as? Double == 5, "\(String(describing: stored))")
        #expect((stored?[".value"] as? Double ?? 0) > 1_600_000_000_000)
        let client = WireClient(port: server.port)
        #expect(try await client.request("p", #"{"p":"/n","d":{".value":{".sv":{"increment":3}},".priority":"p"}}"#)["s"] as? String == "ok")
        await client.close()
        #expect(try await http("GET", "\(base)/n.json?ns=test&format=export").body == #"{".value":3,".priority":"p"}"#)
        await server.stop()
    }

    @Test("a server value as a priority is resolved by the server in sets, merges and onDisconnect")
    func serverValueAsPriority() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        func priority(_ path: String) async throws -> Double? {
            (try await http("GET", "\(base)/\(path).json?ns=test&format=export").json as? [String: Any])?[".priority"] as? Double
        }
        #expect(try await http("PUT", "\(base)/a.json?ns=test", body: #"{".value": "x", ".priority": {".sv": "timestamp"}}"#).status == 200)
        #expect(try await priority("a") ?? 0 > 1_600_000_000_000)
        let client = WireClient(port: server.port)
        #expect(try await client.request("p", #"{"p":"/b","d":{"k":1,".priority":{".sv":"timestamp"}}}"#)["s"] as? String == "ok")
        #expect(try await client.request("m", #"{"p":"/","d":{"c":{".value":2,".priority":{".sv":"timestamp"}}}}"#)["s"] as? String == "ok")
        #expect(try await client.request("o", #"{"p":"/d","d":{".value":3,".priority":{".sv":"timestamp"}}}"#)["s"] as? String == "ok")
        await client.close()
        #expect(try await priority("b") ?? 0 > 1_600_000_000_000)
        #expect(try await priority("c") ?? 0 > 1_600_000_000_000)
        #expect(try await eventually { try await priority("d") ?? 0 > 1_600_000_000_000 })
        #expect(try await http("PUT", "\(base)/e.json?ns=test", body: #"{".value": 1, ".priority": {".sv": "nonsense"}}"#).status == 400)
        await server.stop()
    }
}
