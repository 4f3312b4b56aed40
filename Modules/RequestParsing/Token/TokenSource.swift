/// Who vouches for a token's claims: it decides which claims may name the user.
package enum TokenSource: Sendable {
    /// The server's shared secret: whoever signs holds an administrator credential.
    case secret
    /// An identity provider's key from the JWKS.
    case identityProvider
}
