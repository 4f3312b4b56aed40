public import Foundation
public import RequestParsing
public import ServerCore

/// Verifies credentials: administrator credentials, and JWTs signed with the server's secret or
/// by an identity provider's JWKS key.
///
/// A token is checked in this order, and refused with a ``TokenError`` at the first failure:
///
/// 1. At most 16 KiB, three base64url parts (strict: no padding, no other bytes), a header and a
///    payload that are JSON objects, no `crit` header.
/// 2. The key: the JWKS key its `kid` names, or the server's secret when it names none. A `kid`
///    the JWKS does not hold is refused; it never falls back to another key.
/// 3. The algorithm: the header's `alg` must be the key's own (HS256 for the secret; the JWKS
///    key's `alg`, or RS256 / ES256 / ES384 / ES512 / EdDSA by key type when it has none).
///    `none`, HS512 over the secret or HS256 over a public key are refused before any signature
///    is computed.
/// 4. The signature, with vapor/jwt-kit.
/// 5. The claims: `exp`, `nbf` and `iat`, when present, are numbers of seconds in
///    0 ... 253402300799 (year 9999); `exp` has not passed; `nbf` and `iat` are not more than 60 s
///    ahead; `iss` and `aud` name the configured issuer and audience.
/// 6. The user: `auth.uid` is `sub` for an identity provider's token (as in OpenID Connect; a
///    `uid` claim does not override it). A token signed with the secret may name its user in
///    `sub`, `uid` or `user_id`, and those present must agree. A token naming no user is refused.
public final class TokenVerifier: Sendable {
    private let keys: TokenKeys
    private let configuration: AuthConfiguration
    private let ownerAllowed: Bool
    private let clock: @Sendable () -> Date

    /// A verifier for `configuration`; `ownerAllowed` makes `owner` an administrator credential
    /// (a loopback-only server, for tools and the Admin SDK's emulator mode).
    ///
    /// - Throws: ``ServerError`` `invalidArgument` when the JWKS document cannot be used (see
    ///   the key rules above).
    public init(_ configuration: AuthConfiguration, ownerAllowed: Bool, clock: @escaping @Sendable () -> Date = Date.init) async throws(ServerError) {
        self.configuration = configuration
        self.ownerAllowed = ownerAllowed
        self.clock = clock
        keys = try await TokenKeys.load(secret: configuration.secret, jwksJSON: configuration.jwksJSON)
    }

    /// Lets only administrators through (the `owner` credential on a loopback server, the
    /// secret); anyone else gets `permissionDenied` with `message`.
    func requireAdmin(_ credential: String?, _ message: @autoclosure () -> String) async throws(ServerError) {
        if let credential, case .admin? = try? await verify(credential) { return }
        throw ServerError(.permissionDenied, message())
    }

    /// What `credential` is.
    ///
    /// - Returns: ``Credential/admin`` for the secret itself (and `owner` where allowed),
    ///   ``Credential/user(auth:expires:)`` for a token that passes every check.
    /// - Throws: ``TokenError`` saying which check the token failed (`expired` for a well-signed
    ///   token past its `exp`).
    public func verify(_ credential: String) async throws(TokenError) -> Credential {
        if ownerAllowed && credential == "owner" { return .admin }
        if let secret = configuration.secret, Self.constantTimeEqual(credential, secret) { return .admin }
        guard configuration.verifiesTokens else {
            throw TokenError(.notConfigured, "This server verifies no tokens; start it with --auth-secret-file or --auth-jwks.")
        }
        let token = try CompactToken(credential)
        let key = try keys.key(for: token)
        try key.checkSignature(of: token)
        let claims = try TokenClaims(
            token.payload, signedBy: key.source, issuer: configuration.issuer, audience: configuration.audience, now: clock().timeIntervalSince1970)
        return .user(auth: claims.authVariable, expires: claims.expires)
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
}
