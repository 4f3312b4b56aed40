import CoreTree
import Foundation
import RealtimeServer
import RequestParsing
import SyncProtocol
import Testing
import TestSupport

/// The token verifier against forged, confused and hostile tokens: every one is refused with the
/// ``TokenError`` code that names its fault, the verifier never traps, and `auth.uid` comes from
/// the claim the issuer vouches for. The server's time is fixed, so no token expires mid-test.
@Suite("Token verifier")
struct TokenVerifierTests {
    /// The verifier's "now", seconds since 1970.
    static let now: Double = 1_750_000_000
    /// One identity provider for the whole suite (an RSA key takes a while to generate).
    static let provider: TestIdentityProvider = {
        do { return try TestIdentityProvider() } catch { fatalError("No test identity provider: \(error)") }
    }()

    /// A verifier with the test secret (`secret`), the provider's JWKS (`jwks`), and the issuer
    /// and audience, at ``now``.
    static func verifier(secret: Bool = true, jwks: Bool = true, namingAlgorithms: Bool = true,
                         issuer: String? = nil, audience: String? = nil) async throws -> TokenVerifier {
        let configuration = AuthConfiguration(
            secret: secret ? TestTokens.secret : nil,
            jwksJSON: jwks ? try provider.jwksJSON(namingAlgorithms: namingAlgorithms) : nil,
            issuer: issuer, audience: audience)
        return try await TokenVerifier(configuration, ownerAllowed: false, clock: { Date(timeIntervalSince1970: now) })
    }

    /// Claims for alice valid at ``now``, with `extra` over them (`NSNull()` removes a claim).
    static func claims(_ extra: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = ["sub": "alice", "iat": now - 10, "exp": now + 3600]
        for (name, value) in extra { claims[name] = value is NSNull ? nil : value }
        return claims
    }

    /// A token signed with the test secret (HMAC-SHA256) whose header is `header`.
    static func secretToken(header: [String: Any] = ["alg": "HS256", "typ": "JWT"], _ extra: [String: Any] = [:]) throws -> String {
        try TestTokens.compact(header: header, payload: claims(extra), signature: TestTokens.hmac(TestTokens.secret))
    }

    /// A token signed by the provider's `key` (`RS256` or `ES256`) whose header says `alg` and `kid`.
    static func providerToken(key: String = "RS256", alg: String? = nil, kid: String? = nil, _ extra: [String: Any] = [:]) throws -> String {
        var header: [String: Any] = ["alg": alg ?? key, "typ": "JWT"]
        header["kid"] = kid ?? (key == "ES256" ? "ec-1" : "rsa-1")
        return try TestTokens.compact(header: header, payload: claims(extra), signature: provider.signature(key))
    }

    /// A token made of raw JSON texts, signed with the test secret.
    static func rawToken(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String) -> String {
        let input = "\(TestTokens.base64URL(Data(header.utf8))).\(TestTokens.base64URL(Data(payload.utf8)))"
        return "\(input).\(TestTokens.base64URL(TestTokens.hmac(TestTokens.secret)(Data(input.utf8))))"
    }

    /// Why `verifier` refuses `token`, `nil` when it accepts it.
    static func refusal(of token: String, by verifier: TokenVerifier) async -> TokenError? {
        do throws(TokenError) {
            _ = try await verifier.verify(token)
            return nil
        } catch {
            return error
        }
    }

    /// The `auth.uid` `verifier` gives `token`.
    static func uid(of token: String, by verifier: TokenVerifier) async throws -> String? {
        guard case .user(let auth, _) = try await verifier.verify(token) else { return nil }
        guard case .string(let uid)? = auth.child(at: "uid").leafValue else { return nil }
        return uid
    }

    // MARK: - The header's alg is the key's

    /// Tokens whose header names another algorithm than their key's.
    enum Confusion: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case hs512OverSecret = "an HS512 header over an HS256 signature with the secret"
        case hs512SignedHS512 = "an HS512 header over an HS512 signature with the secret"
        case noneWithoutSignature = "alg none, no signature"
        case noneOverSecret = "alg none over an HS256 signature with the secret"
        case rs256OverSecret = "an RS256 header over an HS256 signature with the secret"
        case lowercase = "alg hs256 (algorithm names are case-sensitive)"
        case hs256NamingRSAKey = "an HS256 header naming the RSA key, HMAC-keyed with its public modulus"
        case es256NamingRSAKey = "an ES256 header naming the RSA key, signed with the EC key"
        case rs512NamingRSAKey = "an RS512 header naming the RSA key over its RS256 signature"
        case noneNamingRSAKey = "alg none naming the RSA key"

        var testDescription: String { rawValue }

        func token() throws -> String {
            switch self {
            case .hs512OverSecret: return try secretToken(header: ["alg": "HS512"])
            case .hs512SignedHS512:
                return try TestTokens.compact(header: ["alg": "HS512"], payload: claims(), signature: TestTokens.hmac(TestTokens.secret, bits: 512))
            case .noneWithoutSignature: return try TestTokens.compact(header: ["alg": "none"], payload: claims(), signature: { _ in Data() })
            case .noneOverSecret: return try secretToken(header: ["alg": "none"])
            case .rs256OverSecret: return try secretToken(header: ["alg": "RS256"])
            case .lowercase: return try secretToken(header: ["alg": "hs256"])
            case .hs256NamingRSAKey:
                let modulus = try provider.rsaModulus()
                return try TestTokens.compact(header: ["alg": "HS256", "kid": "rsa-1"], payload: claims()) { input in
                    TestTokens.hmac(String(decoding: modulus, as: UTF8.self))(input)
                }
            case .es256NamingRSAKey: return try providerToken(key: "ES256", kid: "rsa-1")
            case .rs512NamingRSAKey: return try providerToken(key: "RS256", alg: "RS512")
            case .noneNamingRSAKey:
                return try TestTokens.compact(header: ["alg": "none", "kid": "rsa-1"], payload: claims(), signature: { _ in Data() })
            }
        }
    }

    @Test("a token whose header's alg is not its key's algorithm is refused before its signature is checked",
          arguments: Confusion.allCases, [true, false])
    func algorithmConfusion(_ confusion: Confusion, jwksNamesAlgorithms: Bool) async throws {
        let verifier = try await Self.verifier(namingAlgorithms: jwksNamesAlgorithms)
        let error = await Self.refusal(of: try confusion.token(), by: verifier)
        #expect(error?.code == .algorithmMismatch, "\(String(describing: error))")
        #expect(error?.wireStatus == .invalidToken)
    }

    @Test("a token whose header names its key's own algorithm is a user", arguments: ["HS256", "ES256", "RS256"], [true, false])
    func matchingAlgorithm(_ algorithm: String, jwksNamesAlgorithms: Bool) async throws {
        let verifier = try await Self.verifier(namingAlgorithms: jwksNamesAlgorithms)
        let token = algorithm == "HS256" ? try Self.secretToken() : try Self.providerToken(key: algorithm)
        let credential = try await verifier.verify(token)
        #expect(credential == .user(auth: try Self.authVariable(uid: "alice", token: token), expires: Date(timeIntervalSince1970: Self.now + 3600)))
    }

    /// The `auth` the verifier should make of `token`'s claims for `uid`.
    static func authVariable(uid: String, provider: String = "custom", token: String) throws -> Node {
        let payload = String(token.split(separator: ".")[1])
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Node(children: [
            (key: ChildKey("provider"), value: Node(.string(provider))),
            (key: ChildKey("token"), value: try Node(json: try #require(Data(base64Encoded: base64)))),
            (key: ChildKey("uid"), value: Node(.string(uid))),
        ])
    }

    @Test("a token naming a key without alg in the JWKS cannot change the algorithm that key verifies for later tokens")
    func keyAlgorithmIsFixedAtLoad() async throws {
        let verifier = try await Self.verifier(secret: false, namingAlgorithms: false)
        // jwt-kit makes an alg-less key's verifier for the first alg it is asked for, and keeps it.
        for alg in ["PS256", "RS512", "ES256", "HS256"] {
            #expect(await Self.refusal(of: try Self.providerToken(key: "RS256", alg: alg), by: verifier)?.code == .algorithmMismatch)
        }
        #expect(try await Self.uid(of: try Self.providerToken(key: "RS256"), by: verifier) == "alice")
        #expect(try await Self.uid(of: try Self.providerToken(key: "ES256"), by: verifier) == "alice")
    }

    // MARK: - Who the user is

    @Test("an identity provider's token: auth.uid is sub; a uid or user_id claim does not override it")
    func providerUserIsSubject() async throws {
        let verifier = try await Self.verifier()
        let token = try Self.providerToken(["sub": "mallory", "uid": "alice", "user_id": "alice"])
        #expect(try await Self.uid(of: token, by: verifier) == "mallory")
        guard case .user(let auth, _) = try await verifier.verify(token) else { Issue.record("not a user"); return }
        #expect(auth.child(at: "token/uid").leafValue == .string("alice"), "the claim stays in auth.token")
        let withoutSubject = try Self.providerToken(["sub": NSNull(), "uid": "alice", "user_id": "alice"])
        #expect(await Self.refusal(of: withoutSubject, by: verifier)?.code == .missingIdentity)
    }

    /// Identity claims of a token signed with the secret, and the uid (or refusal) they give.
    struct SecretIdentity: CustomTestStringConvertible, Sendable {
        let claims: [String: String]
        let uid: String?
        let refusal: TokenError.Code?
        var testDescription: String {
            let names = claims.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "\(names.isEmpty ? "no identity claim" : names) -> \(uid ?? refusal.map { "\($0)" } ?? "?")"
        }
    }

    static let secretIdentities: [SecretIdentity] = [
        SecretIdentity(claims: ["sub": "alice"], uid: "alice", refusal: nil),
        SecretIdentity(claims: ["uid": "alice"], uid: "alice", refusal: nil),
        SecretIdentity(claims: ["user_id": "alice"], uid: "alice", refusal: nil),
        SecretIdentity(claims: ["sub": "alice", "uid": "alice", "user_id": "alice"], uid: "alice", refusal: nil),
        SecretIdentity(claims: ["sub": "mallory", "uid": "alice"], uid: nil, refusal: .conflictingIdentity),
        SecretIdentity(claims: ["sub": "mallory", "user_id": "alice"], uid: nil, refusal: .conflictingIdentity),
        SecretIdentity(claims: ["uid": "alice", "user_id": "mallory"], uid: nil, refusal: .conflictingIdentity),
        SecretIdentity(claims: ["sub": "", "uid": "alice"], uid: nil, refusal: .invalidClaim),
        SecretIdentity(claims: [:], uid: nil, refusal: .missingIdentity),
    ]

    @Test("a token signed with the secret names its user in sub, uid or user_id, and those present agree",
          arguments: secretIdentities)
    func secretTokenUser(_ identity: SecretIdentity) async throws {
        let verifier = try await Self.verifier()
        var claims: [String: Any] = ["sub": NSNull()]
        for (name, value) in identity.claims { claims[name] = value }
        let token = try Self.secretToken(claims)
        if let uid = identity.uid {
            #expect(try await Self.uid(of: token, by: verifier) == uid)
        } else {
            #expect(await Self.refusal(of: token, by: verifier)?.code == identity.refusal)
        }
    }

    // MARK: - Hostile input

    /// A token that must be refused, the code it must get, and the verifier it is shown to.
    struct Hostile: CustomTestStringConvertible, Sendable {
        let name: String
        let code: TokenError.Code
        var withSecret = true
        let token: @Sendable () throws -> String
        var testDescription: String { name }
    }

    static let oneLevelTooDeep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)

    static let hostile: [Hostile] = [
        // Size and shape.
        Hostile(name: "a 1 MiB token", code: .tooLarge) { String(repeating: "a", count: 1 << 20) },
        Hostile(name: "a well-signed token of 20 KiB", code: .tooLarge) { try secretToken(["pad": String(repeating: "x", count: 20_000)]) },
        Hostile(name: "a 1 MiB token of dots", code: .tooLarge) { String(repeating: ".", count: 1 << 20) },
        Hostile(name: "the empty string", code: .malformed) { "" },
        Hostile(name: "two parts", code: .malformed) { try secretToken().split(separator: ".").prefix(2).joined(separator: ".") },
        Hostile(name: "four parts", code: .malformed) { try secretToken() + ".AAAA" },
        Hostile(name: "three empty parts", code: .malformed) { ".." },
        // Base64url.
        Hostile(name: "a header that is not base64url", code: .malformed) { "!!!!." + (try secretToken().split(separator: ".", maxSplits: 1)[1]) },
        Hostile(name: "a header in padded base64", code: .malformed) {
            let token = try secretToken()
            return token.replacingOccurrences(of: ".", with: "=.", options: [], range: token.startIndex..<token.index(after: token.firstIndex(of: ".")!))
        },
        Hostile(name: "a header in base64 with + and /", code: .malformed) { "e+/9." + (try secretToken().split(separator: ".", maxSplits: 1)[1]) },
        Hostile(name: "a header with set bits past its last byte", code: .malformed) { "e31." + (try secretToken().split(separator: ".", maxSplits: 1)[1]) },
        Hostile(name: "a header of one base64 character too many", code: .malformed) { "e30AA." + (try secretToken().split(separator: ".", maxSplits: 1)[1]) },
        Hostile(name: "a signature that is not base64url", code: .malformed) { try secretToken().split(separator: ".").prefix(2).joined(separator: ".") + ".***" },
        // The header's JSON.
        Hostile(name: "a header that is not JSON", code: .malformed) { rawToken(header: "not json", payload: "{}") },
        Hostile(name: "a header cut short", code: .malformed) { rawToken(header: #"{"alg":"HS256""#, payload: #"{"sub":"alice"}"#) },
        Hostile(name: "a header that is a JSON array", code: .malformed) { rawToken(header: #"["HS256"]"#, payload: #"{"sub":"alice"}"#) },
        Hostile(name: "a header that is a JSON string", code: .malformed) { rawToken(header: #""HS256""#, payload: #"{"sub":"alice"}"#) },
        Hostile(name: "a header nested 600 levels deep", code: .malformed) {
            rawToken(header: #"{"alg":"HS256","x":\#(oneLevelTooDeep)}"#, payload: #"{"sub":"alice"}"#)
        },
        Hostile(name: "a header without alg", code: .malformed) { try secretToken(header: ["typ": "JWT"]) },
        Hostile(name: "a header whose alg is a number", code: .malformed) { try secretToken(header: ["alg": 256]) },
        Hostile(name: "a header whose alg is null", code: .malformed) { rawToken(header: #"{"alg":null}"#, payload: #"{"sub":"alice"}"#) },
        Hostile(name: "a header with crit", code: .unsupportedHeader) { try secretToken(header: ["alg": "HS256", "crit": ["exp"]]) },
        // Keys.
        Hostile(name: "an unknown kid", code: .unknownKey) { try providerToken(kid: "rotated-away") },
        Hostile(name: "an unknown kid of 10 KB", code: .unknownKey) { try providerToken(kid: String(repeating: "k", count: 10_000)) },
        Hostile(name: "a kid on a secret-signed token", code: .unknownKey) { try secretToken(header: ["alg": "HS256", "kid": "secret"]) },
        Hostile(name: "no kid where only a JWKS is configured", code: .unknownKey, withSecret: false) {
            try TestTokens.compact(header: ["alg": "RS256"], payload: claims(), signature: provider.signature("RS256"))
        },
        Hostile(name: "a kid that is a number", code: .malformed) {
            try TestTokens.compact(header: ["alg": "RS256", "kid": 1], payload: claims(), signature: provider.signature("RS256"))
        },
        // Signatures.
        Hostile(name: "another secret's signature", code: .badSignature) {
            try TestTokens.compact(header: ["alg": "HS256"], payload: claims(), signature: TestTokens.hmac("not-the-server-secret-0123456789"))
        },
        Hostile(name: "an empty HS256 signature", code: .badSignature) { try secretToken().split(separator: ".").prefix(2).joined(separator: ".") + "." },
        Hostile(name: "an RS256 signature cut in half", code: .badSignature) { String(try providerToken().dropLast(170)) },
        Hostile(name: "an ES256 signature one byte short", code: .badSignature) {
            let token = try providerToken(key: "ES256")
            let parts = token.split(separator: ".")
            return "\(parts[0]).\(parts[1]).\(TestTokens.base64URL(Data(repeating: 1, count: 63)))"
        },
        Hostile(name: "a signature over another payload", code: .badSignature) {
            let (alice, mallory) = (try secretToken().split(separator: "."), try secretToken(["sub": "mallory"]).split(separator: "."))
            return "\(alice[0]).\(mallory[1]).\(alice[2])"
        },
        // The payload.
        Hostile(name: "a payload that is not JSON", code: .malformed) { rawToken(payload: "sub=alice") },
        Hostile(name: "a payload that is a JSON array", code: .malformed) { rawToken(payload: #"[{"sub":"alice"}]"#) },
        Hostile(name: "a payload with a number past a double", code: .malformed) { rawToken(payload: #"{"sub":"alice","exp":1e999}"#) },
        // Times.
        Hostile(name: "exp as a string", code: .invalidClaim) { try secretToken(["exp": "tomorrow"]) },
        Hostile(name: "exp as a numeric string", code: .invalidClaim) { try secretToken(["exp": "\(Int(now) + 3600)"]) },
        Hostile(name: "exp as a boolean", code: .invalidClaim) { try secretToken(["exp": true]) },
        Hostile(name: "exp as an array", code: .invalidClaim) { try secretToken(["exp": [now + 3600]]) },
        Hostile(name: "a negative exp", code: .invalidClaim) { try secretToken(["exp": -1]) },
        Hostile(name: "an exp of 1e300", code: .invalidClaim) { rawToken(payload: #"{"sub":"alice","exp":1e300}"#) },
        Hostile(name: "an exp past the year 9999", code: .invalidClaim) { try secretToken(["exp": 253_402_300_800]) },
        Hostile(name: "an exp of 2^63", code: .invalidClaim) { rawToken(payload: #"{"sub":"alice","exp":9223372036854775808}"#) },
        Hostile(name: "an exp that has passed", code: .expired) { try secretToken(["exp": now - 1]) },
        Hostile(name: "an exp of now", code: .expired) { try secretToken(["exp": now]) },
        Hostile(name: "nbf as a string", code: .invalidClaim) { try secretToken(["nbf": "soon"]) },
        Hostile(name: "a negative nbf", code: .invalidClaim) { try secretToken(["nbf": -60]) },
        Hostile(name: "an nbf of 1e300", code: .invalidClaim) { rawToken(payload: #"{"sub":"alice","nbf":1e300}"#) },
        Hostile(name: "an nbf an hour ahead", code: .notYetValid) { try secretToken(["nbf": now + 3600]) },
        Hostile(name: "iat as a string", code: .invalidClaim) { try secretToken(["iat": "yesterday"]) },
        Hostile(name: "a negative iat", code: .invalidClaim) { try secretToken(["iat": -5]) },
        Hostile(name: "an iat of 1e20", code: .invalidClaim) { rawToken(payload: #"{"sub":"alice","iat":1e20}"#) },
        Hostile(name: "an iat an hour ahead", code: .notYetValid) { try secretToken(["iat": now + 3600]) },
        // The user.
        Hostile(name: "sub as a number", code: .invalidClaim) { try secretToken(["sub": 42]) },
        Hostile(name: "sub as an object", code: .invalidClaim) { try secretToken(["sub": ["uid": "alice"]]) },
        Hostile(name: "an identity provider's token without sub", code: .missingIdentity) { try providerToken(["sub": NSNull(), "uid": "alice"]) },
        Hostile(name: "an identity provider's token with an empty sub", code: .invalidClaim) { try providerToken(["sub": ""]) },
    ]

    @Test("hostile tokens are refused with the code that names the fault and a short message", arguments: hostile)
    func hostileToken(_ hostile: Hostile) async throws {
        let verifier = try await Self.verifier(secret: hostile.withSecret)
        let error = await Self.refusal(of: try hostile.token(), by: verifier)
        #expect(error?.code == hostile.code, "\(String(describing: error))")
        #expect(error.map { !$0.message.isEmpty && $0.message.count < 300 } == true, "\(String(describing: error?.message))")
        #expect(error.map { !$0.message.contains(TestTokens.secret) } == true)
        #expect(error?.wireStatus == (hostile.code == .expired ? .expiredToken : .invalidToken))
    }

    @Test("a token just under the size bound is read")
    func largeButAllowed() async throws {
        let verifier = try await Self.verifier()
        let token = try Self.secretToken(["pad": String(repeating: "x", count: 11_500)])
        #expect(token.utf8.count > 15_000 && token.utf8.count <= 16 * 1024)
        #expect(try await Self.uid(of: token, by: verifier) == "alice")
    }

    @Test("two thousand seeded mutations of valid tokens: each is a user or a refusal with a message")
    func mutations() async throws {
        let verifier = try await Self.verifier()
        let originals = [try Self.secretToken(), try Self.providerToken(key: "RS256"), try Self.providerToken(key: "ES256")]
        let alphabet = Array("AZaz09-_.=+/ {}\"\\\u{0}\u{FFFD}é".unicodeScalars)
        var random = SplitMix64(seed: 35)
        var refused = 0
        for round in 0..<2000 {
            var scalars = Array(originals[round % originals.count].unicodeScalars)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let index = Int(random.next() % UInt64(scalars.count))
                switch random.next() % 4 {
                case 0: scalars[index] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: scalars.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: index)
                case 2: if scalars.count > 1 { scalars.remove(at: index) }
                default: scalars.removeSubrange(index...)
                }
                if scalars.isEmpty { scalars = ["."] }
            }
            var token = ""
            token.unicodeScalars.append(contentsOf: scalars)
            if let error = await Self.refusal(of: token, by: verifier) {
                refused += 1
                #expect(!error.message.isEmpty && error.message.count < 300, "\(token): \(error)")
            }
        }
        #expect(refused > 1900, "almost every mutation breaks the token (\(refused) of 2000 refused)")
    }
}
