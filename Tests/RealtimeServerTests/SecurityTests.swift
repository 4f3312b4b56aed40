import Foundation
import RealtimeServer
import ServerCore
import Testing
import TestSupport

/// Credentials against a real rtdb-server process verifying HS256 tokens with an issuer and an
/// audience: only a valid token for the right user gets through, on every entry point; nothing
/// is written otherwise.
@Suite("Security")
struct SecurityTests {
    static let issuer = "https://issuer.example"
    static let audience = "rtdb-tests"
    static let rules = """
    {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}}}}
    """

    static func launch() async throws -> ServerProcess {
        let rulesFile = NSTemporaryDirectory() + "rtdb-security-rules-\(UUID().uuidString).json"
        _ = FileManager.default.createFile(atPath: rulesFile, contents: Data(rules.utf8))
        // rtdb-server reads the rules file when it starts, before it says it listens.
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        return try await ServerProcess.launch(
            backend: "memory",
            arguments: TestTokens.serverArguments + ["--rules", rulesFile, "--auth-issuer", issuer, "--auth-audience", audience])
    }

    static func token(_ subject: String, expiresIn: TimeInterval = 3600, issuer: String = issuer, audience: String = audience,
                      secret: String = TestTokens.secret, algorithm: String = "HS256") -> String {
        TestTokens.token(subject: subject, expiresIn: expiresIn, claims: ["iss": issuer, "aud": audience], secret: secret, algorithm: algorithm)
    }

    /// A token of raw JSON claims signed with the test secret (for numbers JSONSerialization
    /// cannot write).
    static func rawToken(_ claims: String) -> String {
        let input = "\(TestTokens.base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))).\(TestTokens.base64URL(Data(claims.utf8)))"
        return "\(input).\(TestTokens.base64URL(TestTokens.hmac(TestTokens.secret)(Data(input.utf8))))"
    }

    /// Every credential that must not act as alice, by name.
    static var badCredentials: [(String, String?)] {
        [
            ("no token", nil),
            ("another user's token", token("mallory")),
            ("a forged signature", token("alice", secret: "not-the-server-secret-0123456789")),
            ("an expired token", token("alice", expiresIn: -60)),
            ("a token for another audience", token("alice", audience: "someone-else")),
            ("a token from another issuer", token("alice", issuer: "https://evil.example")),
            ("alg none", token("alice", algorithm: "none")),
            ("an HS512 header over an HS256 signature", token("alice", algorithm: "HS512")),
            ("an RS256 header over an HS256 signature", token("alice", algorithm: "RS256")),
            ("sub mallory with uid alice", TestTokens.token(subject: "mallory", claims: ["iss": issuer, "aud": audience, "uid": "alice"])),
            ("an exp of 1e300", rawToken(#"{"sub":"alice","iss":"\#(issuer)","aud":"\#(audience)","exp":1e300}"#)),
            ("an exp of -1", token("alice", expiresIn: -Date().timeIntervalSince1970 - 1)),
        ]
    }

    @Test("REST verbs and event streams: only alice's valid token reads and writes alice's data")
    func rest() async throws {
        let server = try await Self.launch()
        defer { Task { await server.shutDown() } }
        let base = "http://127.0.0.1:\(server.port)"
        let good = Self.token("alice")
        #expect(try await http("PUT", "\(base)/users/alice.json?ns=s&auth=\(good)", body: #"{"name":"Alice"}"#).status == 200)
        for (name, credential) in Self.badCredentials {
            let auth = credential.map { "&auth=\($0)" } ?? ""
            #expect(try await http("GET", "\(base)/users/alice.json?ns=s\(auth)").status == 401, "GET with \(name)")
            #expect(try await http("PUT", "\(base)/users/alice/name.json?ns=s\(auth)", body: #""Eve""#).status == 401, "PUT with \(name)")
            #expect(try await http("PATCH", "\(base)/users/alice.json?ns=s\(auth)", body: #"{"x":1}"#).status == 401, "PATCH with \(name)")
            #expect(try await http("POST", "\(base)/users/alice.json?ns=s\(auth)", body: "1").status == 401, "POST with \(name)")
            #expect(try await http("DELETE", "\(base)/users/alice.json?ns=s\(auth)").status == 401, "DELETE with \(name)")
            let stream = try await http("GET", "\(base)/users/alice.json?ns=s\(auth)", headers: ["Accept": "text/event-stream"])
            #expect(stream.status == 401, "stream with \(name)")
        }
        let expired = try await http("GET", "\(base)/users/alice.json?ns=s&auth=\(Self.token("alice", expiresIn: -60))")
        #expect(expired.body.contains("expired"), "a REST 401 says why: \(expired.body)")
        #expect(try await http("GET", "\(base)/users/alice.json?ns=s&auth=\(good)").body == #"{"name":"Alice"}"#, "nothing was written")
        // The secret itself is an administrator credential; admins can act as a given auth.
        #expect(try await http("GET", "\(base)/users/alice.json?ns=s&auth=\(TestTokens.secret)").status == 200)
        let asBob = #"{"uid":"bob"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        #expect(try await http("GET", "\(base)/users/alice.json?ns=s&auth=\(TestTokens.secret)&auth_variable_override=\(asBob)").status == 401)
        #expect(try await http("GET", "\(base)/users/bob.json?ns=s&auth=\(TestTokens.secret)&auth_variable_override=\(asBob)").status == 200)
        #expect(try await http("GET", "\(base)/users/alice.json?ns=s&auth=owner").status == 200,
                "owner stays an administrator credential on a loopback-only server (tools, the Admin SDK's emulator mode)")
    }

    @Test("WebSocket actions and onDisconnect: a bad credential is refused and acts as nobody; nothing is written")
    func webSocket() async throws {
        let server = try await Self.launch()
        defer { Task { await server.shutDown() } }
        let base = "http://127.0.0.1:\(server.port)"
        #expect(try await http("PUT", "\(base)/users/alice.json?ns=s&auth=\(Self.token("alice"))", body: #"{"name":"Alice"}"#).status == 200)
        for (name, credential) in Self.badCredentials {
            let client = WireClient(port: server.port, namespace: "s")
            if let credential {
                let reply = try await client.request("auth", #"{"cred":"\#(credential)"}"#)
                let status = reply["s"] as? String
                if name == "another user's token" {
                    #expect(status == "ok")
                } else {
                    #expect(status == "invalid_token" || status == "expired_token", "auth with \(name): \(reply)")
                }
            }
            func status(_ action: String, _ body: String) async throws -> String? { try await client.request(action, body)["s"] as? String }
            #expect(try await status("q", #"{"p":"/users/alice","h":""}"#) == "permission_denied", "listen with \(name)")
            #expect(try await status("g", #"{"p":"/users/alice","q":{}}"#) == "permission_denied", "get with \(name)")
            #expect(try await status("p", #"{"p":"/users/alice/name","d":"Eve"}"#) == "permission_denied", "put with \(name)")
            #expect(try await status("m", #"{"p":"/users/alice","d":{"name":"Eve"}}"#) == "permission_denied", "merge with \(name)")
            #expect(try await status("p", #"{"p":"/users/alice/name","d":"Eve","h":"x"}"#) == "permission_denied", "compare-and-put with \(name)")
            #expect(try await status("o", #"{"p":"/users/alice/name","d":"Eve"}"#) == "permission_denied", "onDisconnect with \(name)")
            await client.close()
        }
        #expect(try await http("GET", "\(base)/users/alice/name.json?ns=s&auth=\(Self.token("alice"))").body == #""Alice""#)
    }

    @Test("A token that expires on an open connection: ac (expired_token), its listens revoked, then it acts as nobody")
    func expiryOnAnOpenConnection() async throws {
        // The server's time only moves when the test advances it: the token expires then, not
        // after a wait on the wall clock.
        let clock = ManualClock()
        let server = try await TestServer.start { configuration in
            configuration.clock = ServerClock(clock, wallClockAtStart: Date())
            configuration.auth = AuthConfiguration(secret: TestTokens.secret, issuer: Self.issuer, audience: Self.audience)
            configuration.rulesJSON = Self.rules
        }
        defer { Task { await server.stop() } }
        let client = WireClient(port: server.port, namespace: "s")
        #expect(try await client.request("auth", #"{"cred":"\#(Self.token("alice", expiresIn: 60))"}"#)["s"] as? String == "ok")
        #expect(try await client.request("q", #"{"p":"/users/alice","h":""}"#)["s"] as? String == "ok")
        #expect(try await client.request("p", #"{"p":"/users/alice/n","d":1}"#)["s"] as? String == "ok")
        // The expiry timer is armed (a sleep on the clock); 50 s on, the token still holds.
        await clock.waitForSleepers(atLeast: 1)
        clock.advance(by: .seconds(50))
        #expect(try await client.request("p", #"{"p":"/users/alice/n","d":1}"#)["s"] as? String == "ok")
        #expect(await client.messages().contains { ($0["d"] as? [String: Any])?["a"] as? String == "ac" } == false)
        // Past the expiry (whole seconds in the token, read from the wall clock when it was made).
        clock.advance(by: .seconds(60))
        let revokedAuth = try await client.first(timeout: .seconds(30)) { ($0["d"] as? [String: Any])?["a"] as? String == "ac" }
        #expect(((revokedAuth["d"] as? [String: Any])?["b"] as? [String: Any])?["s"] as? String == "expired_token")
        _ = try await client.first(timeout: .seconds(5)) { ($0["d"] as? [String: Any])?["a"] as? String == "c" }
        #expect(try await client.request("p", #"{"p":"/users/alice/n","d":2}"#)["s"] as? String == "permission_denied")
        // A fresh token brings the rights back.
        #expect(try await client.request("auth", #"{"cred":"\#(Self.token("alice"))"}"#)["s"] as? String == "ok")
        #expect(try await client.request("p", #"{"p":"/users/alice/n","d":3}"#)["s"] as? String == "ok")
        await client.close()
    }

    @Test("JWKS: ES256 and RS256 tokens picked by kid are users; a token signed by a key outside the set is refused")
    func jwks() async throws {
        let provider = try TestIdentityProvider()
        let stranger = try TestIdentityProvider()
        let jwks = try provider.jwksJSON()
        let server = try await TestServer.start { configuration in
            configuration.auth = AuthConfiguration(jwksJSON: jwks, issuer: Self.issuer, audience: Self.audience)
            configuration.rulesJSON = Self.rules
        }
        let base = server.baseURL
        let exp = Int(Date().timeIntervalSince1970) + 3600
        let claims: [String: Any] = ["sub": "alice", "iss": Self.issuer, "aud": Self.audience, "exp": exp]
        for algorithm in ["ES256", "RS256"] {
            let token = try provider.token(algorithm, claims: claims)
            #expect(try await http("PUT", "\(base)/users/alice/\(algorithm).json?ns=j&auth=\(token)", body: "1").status == 200, "\(algorithm)")
            let client = WireClient(port: server.port, namespace: "j")
            #expect(try await client.request("auth", #"{"cred":"\#(token)"}"#)["s"] as? String == "ok", "\(algorithm)")
            #expect(try await client.request("p", #"{"p":"/users/alice/ws","d":1}"#)["s"] as? String == "ok", "\(algorithm)")
            await client.close()
            let forged = try stranger.token(algorithm, claims: claims)
            #expect(try await http("PUT", "\(base)/users/alice/x.json?ns=j&auth=\(forged)", body: "1").status == 401, "\(algorithm) from another key")
            var otherAudience = claims
            otherAudience["aud"] = "someone-else"
            #expect(try await http("GET", "\(base)/users/alice.json?ns=j&auth=\(try provider.token(algorithm, claims: otherAudience))").status == 401)
        }
        #expect(try await http("GET", "\(base)/users/alice/x.json?ns=j&auth=\(try provider.token("ES256", claims: claims))").body == "null")
        // The provider vouches for sub; a uid claim beside it does not make mallory alice.
        var mallory = claims
        (mallory["sub"], mallory["uid"], mallory["user_id"]) = ("mallory", "alice", "alice")
        let malloryToken = try provider.token("RS256", claims: mallory)
        #expect(try await http("PUT", "\(base)/users/alice/x.json?ns=j&auth=\(malloryToken)", body: "1").status == 401)
        #expect(try await http("PUT", "\(base)/users/mallory/x.json?ns=j&auth=\(malloryToken)", body: "1").status == 200)
        await server.stop()
    }

    @Test("hostile tokens on the WebSocket and REST: a refusal that says why, and the server stays up")
    func hostileTokens() async throws {
        let server = try await Self.launch()
        defer { Task { await server.shutDown() } }
        let base = "http://127.0.0.1:\(server.port)"
        let cases: [(name: String, token: String, says: String)] = [
            ("an exp of 1e300", Self.rawToken(#"{"sub":"alice","iss":"\#(Self.issuer)","aud":"\#(Self.audience)","exp":1e300}"#), "exp"),
            ("an iat of 1e20", Self.rawToken(#"{"sub":"alice","iss":"\#(Self.issuer)","aud":"\#(Self.audience)","iat":1e20}"#), "iat"),
            ("a 64 KiB token", String(repeating: "a", count: 64 * 1024), "bytes"),
            ("a header that is not JSON", "bm90IGpzb24.e30.", "header"),
            ("an HS512 header", Self.token("alice", algorithm: "HS512"), "HS512"),
        ]
        for (name, token, says) in cases {
            let client = WireClient(port: server.port, namespace: "s")
            let reply = try await client.request("auth", #"{"cred":"\#(token)"}"#)
            #expect(reply["s"] as? String == "invalid_token", "\(name): \(reply)")
            #expect((reply["d"] as? String)?.contains(says) == true, "\(name): \(reply)")
            #expect(try await client.request("p", #"{"p":"/users/alice/n","d":1}"#)["s"] as? String == "permission_denied", "\(name)")
            await client.close()
            if token.utf8.count < 8 * 1024 {
                let rest = try await http("GET", "\(base)/users/alice.json?ns=s", headers: ["Authorization": "Bearer \(token)"])
                #expect(rest.status == 401 && rest.body.contains(says), "\(name): \(rest.status) \(rest.body)")
            }
        }
        #expect(try await http("PUT", "\(base)/users/alice/n.json?ns=s&auth=\(Self.token("alice"))", body: "2").status == 200, "the server is up")
    }

    @Test("random rule documents and expressions never crash the server's parser")
    func rulesEndpointFuzz() async throws {
        let server = try await Self.launch()
        defer { Task { await server.shutDown() } }
        let base = "http://127.0.0.1:\(server.port)"
        var random = SplitMix64(seed: 2026)
        let pieces = ["{", "}", "\"rules\"", ":", ",", "\".read\"", "\".write\"", "\"$x\"", "\"auth.uid == $x\"", "true", "\"data.val() >\"",
                      "[", "]", "\"/re/\"", "//c\n", "/*", "*/", "'", "\"\\u00\"", "null", "1e999", "\".validate\"", "\"root.child(\""]
        for _ in 0..<150 {
            var document = ""
            for _ in 0..<(random.next() % 14 + 1) { document += pieces[Int(random.next() % UInt64(pieces.count))] }
            let reply = try await http("PUT", "\(base)/.settings/rules.json?ns=s&auth=\(TestTokens.secret)", body: document)
            #expect([200, 400].contains(reply.status), "\(document) -> \(reply.status)")
        }
        #expect(try await http("GET", "\(base)/.settings/rules.json?ns=s&auth=\(TestTokens.secret)").status == 200, "the server is alive")
    }
}
