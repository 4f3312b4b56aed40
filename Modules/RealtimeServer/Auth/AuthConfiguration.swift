/// How the server checks credentials: a shared secret (HS256 tokens, and the secret itself as an
/// administrator credential, like Firebase's legacy database secrets), and a JWKS document (RS256,
/// ES256 and other public-key tokens from an identity provider), with the issuer and audience they
/// must name.
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
