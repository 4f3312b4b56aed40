public import CoreTree
public import Foundation
import JWTKit
import ServerCore

/// How the server checks credentials: a shared secret (HS256 tokens, and the secret itself as an
/// administrator credential, like Firebase's legacy database secrets), and a JWKS document (RS256
/// and ES256 tokens from an identity provider), with the issuer and audience it must name.
public struct AuthConfiguration: Sendable {
    /// The HS256 secret; presented as it is, it is an administrator credential.
    public var secret: String?
    /// A JWKS document (`{"keys": [...]}`); keys are picked by the token's `kid`.
    public var jwksJSON: String?
    /// The `iss` tokens must carry, when set.
    public var issuer: String?
    /// The `aud` tokens must carry, when set.
    public var audience: String?

    /// A configuration; every part is optional (none verifies no tokens).
    public init(secret: String? = nil, jwksJSON: String? = nil, issuer: String? = nil, audience: String? = nil) {
        self.secret = secret
        self.jwksJSON = jwksJSON
        self.issuer = issuer
        self.audience = audience
    }

    /// Whether any way of verifying tokens is configured.
    public var verifiesTokens: Bool { secret != nil || jwksJSON != nil }
}

/// What a credential turned out to be.
public enum Credential: Sendable, Equatable {
    /// An administrator: rules do not apply.
    case admin
    /// A verified user token: `auth` is the rules' `auth` variable; `expires` when it stops being valid.
    case user(auth: Node, expires: Date?)
    /// A token that failed verification, with why (for the client and the log).
    case invalid(String)
    /// A well-signed token past its expiry.
    case expired(String)
}

/// Verifies credentials with vapor/jwt-kit: signatures (HS256 with the secret; RS256/ES256 with the
/// JWKS keys, picked by `kid`; `alg: none` never), then expiry, not-before, issuer and audience.
public final class TokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    private let configuration: AuthConfiguration
    private let ownerAllowed: Bool
    private let clock: @Sendable () -> Date

    /// A verifier for `configuration`; `ownerAllowed` makes `owner` an administrator credential
    /// (a loopback-only server, for tools and the Admin SDK's emulator mode).
    ///
    /// - Throws: ``ServerError`` `invalidArgument` when the JWKS document cannot be read.
    public init(_ configuration: AuthConfiguration, ownerAllowed: Bool, clock: @escaping @Sendable () -> Date = Date.init) async throws {
        self.configuration = configuration
        self.ownerAllowed = ownerAllowed
        self.clock = clock
        let keys = JWTKeyCollection()
        if let secret = configuration.secret {
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        }
        if let jwks = configuration.jwksJSON {
            do {
                try await keys.add(jwksJSON: jwks)
            } catch {
                throw ServerError(.invalidArgument, "The JWKS document cannot be used: \(error)")
            }
        }
        self.keys = keys
    }

    /// The claims every check needs; the rest of the payload is read as it is for `auth.token`.
    private struct Claims: JWTPayload {
        var sub: String?
        var exp: Double?
        var nbf: Double?
        var iss: String?
        var aud: Audience?

        /// `aud` is a string or an array of strings.
        enum Audience: Codable, Sendable {
            case one(String), many([String])
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let one = try? container.decode(String.self) { self = .one(one) } else { self = .many(try container.decode([String].self)) }
            }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .one(let value): try container.encode(value)
                case .many(let values): try container.encode(values)
                }
            }
            var values: [String] {
                switch self {
                case .one(let value): [value]
                case .many(let values): values
                }
            }
        }

        // Time and audience are checked by the verifier, which tells expiry apart from forgery.
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Lets only administrators through (the `owner` credential on a loopback server, the
    /// secret, an admin token); anyone else gets `permissionDenied` with `message`.
    func requireAdmin(_ credential: String?, _ message: @autoclosure () -> String) async throws(ServerError) {
        if let credential, case .admin = await verify(credential) { return }
        throw ServerError(.permissionDenied, message())
    }

    /// What `credential` is.
    public func verify(_ credential: String) async -> Credential {
        if ownerAllowed && credential == "owner" { return .admin }
        if let secret = configuration.secret, Self.constantTimeEqual(credential, secret) { return .admin }
        guard configuration.verifiesTokens else {
            return .invalid("This server verifies no tokens; start it with --auth-secret-file or --auth-jwks.")
        }
        let claims: Claims
        do {
            claims = try await keys.verify(credential, as: Claims.self)
        } catch {
            return .invalid("The token's signature or format is not valid.")
        }
        let now = clock().timeIntervalSince1970
        if let exp = claims.exp, exp <= now { return .expired("The token expired.") }
        if let nbf = claims.nbf, nbf > now + 60 { return .invalid("The token is not valid yet.") }
        if let issuer = configuration.issuer, claims.iss != issuer { return .invalid("The token was issued by someone else.") }
        if let audience = configuration.audience, !(claims.aud?.values.contains(audience) ?? false) {
            return .invalid("The token is meant for another audience.")
        }
        guard let token = Self.payload(of: credential) else { return .invalid("The token's payload is not a JSON object.") }
        return .user(auth: Self.authVariable(token: token, subject: claims.sub), expires: claims.exp.map { Date(timeIntervalSince1970: $0) })
    }

    /// Whether `a` and `b` are equal, in time that does not depend on where they differ (the
    /// secret is an administrator credential: an early exit would leak it byte by byte).
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (left, right) = (Array(a.utf8), Array(b.utf8))
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? left[index] : 0
            let r = index < right.count ? right[index] : 0
            difference |= l ^ r
        }
        return difference == 0 && left.count == right.count
    }

    /// The payload (second part) of a compact JWT as a tree.
    private static func payload(of token: String) -> Node? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let node = try? Node(json: data), !node.isLeaf, !node.isEmpty else { return nil }
        return node
    }

    /// The rules' `auth`: `uid` (the `uid`, `user_id` or `sub` claim), `provider` (Firebase's
    /// `firebase.sign_in_provider`, else `custom`) and `token` (every claim).
    static func authVariable(token: Node, subject: String?) -> Node {
        func string(_ path: TreePath) -> String? {
            if case .string(let value)? = token.child(at: path).leafValue { return value }
            return nil
        }
        let uid = string("uid") ?? string("user_id") ?? subject ?? ""
        let provider = string("firebase/sign_in_provider") ?? string("provider") ?? "custom"
        return Node(children: [
            (key: ChildKey("provider"), value: Node(.string(provider))),
            (key: ChildKey("token"), value: token),
            (key: ChildKey("uid"), value: Node(.string(uid))),
        ])
    }
}
