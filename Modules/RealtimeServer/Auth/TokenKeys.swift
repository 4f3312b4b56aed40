import CoreTree
import Foundation
import JWTKit
import RequestParsing
import ServerCore

/// The keys that verify tokens, each with the one algorithm it verifies, and the rule that picks
/// the key for a token.
///
/// A token with no `kid` is verified with the server's secret (HS256); a token with a `kid` with
/// the JWKS key of that `kid`. Either way the header's `alg` must be that key's algorithm, so
/// the token cannot choose how it is checked (an HS512 or `none` header over the secret, an HS256
/// header over a public key). jwt-kit does the cryptography; the choice of key and algorithm is
/// made here, once, when the keys are loaded.
struct TokenKeys: Sendable {
    /// Who vouches for a token's claims.
    typealias Source = TokenSource

    /// One key and the algorithm it verifies.
    struct Key: Sendable {
        /// The `alg` a token verified by this key must name (`HS256`, `RS256`, `ES256`, ...).
        let algorithm: String
        /// jwt-kit's verifier for the key, made for ``algorithm``.
        let verifier: any JWTAlgorithm
        /// Where the key comes from.
        let source: Source
        /// The key in words, for messages (`the server's secret`, `the JWKS key "k1"`).
        let name: String

        /// Checks that `token`'s signature is this key's.
        ///
        /// - Throws: ``TokenError`` `badSignature`.
        func checkSignature(of token: CompactToken) throws(TokenError) {
            let valid: Bool
            do {
                valid = try verifier.verify(token.signature, signs: token.signingInput)
            } catch {
                throw TokenError(.badSignature, "The token's signature is not a valid \(algorithm) signature.", underlying: error)
            }
            guard valid else { throw TokenError(.badSignature, "The token's signature does not match \(name).") }
        }
    }

    /// The secret's key, when a secret is configured.
    let secret: Key?
    /// The JWKS keys by `kid`.
    let identityProvider: [String: Key]

    /// The keys of `secret` and of the JWKS document `jwksJSON`.
    ///
    /// A JWKS key's algorithm is its `alg` member; a key without one verifies the algorithm its
    /// type implies: RS256 for RSA (the OpenID Connect default), ES256, ES384 or ES512 for an EC
    /// key on P-256, P-384 or P-521, EdDSA for an OKP key. Publish `alg` to use RS384, RS512 or
    /// PS256 with an RSA key.
    ///
    /// - Throws: ``ServerError`` `invalidArgument` when the JWKS cannot be read, a key has no
    ///   `kid`, two keys share one, or a key's algorithm is not one jwt-kit verifies.
    static func load(secret: String?, jwksJSON: String?) async throws(ServerError) -> TokenKeys {
        var secretKey: Key?
        if let secret {
            let collection = JWTKeyCollection()
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            do {
                secretKey = Key(algorithm: "HS256", verifier: try await collection.getKey(), source: .secret, name: "the server's secret")
            } catch {
                throw ServerError(.invalidArgument, "The secret cannot be used as an HS256 key: \(error)", underlying: error)
            }
        }
        var identityProvider: [String: Key] = [:]
        if let jwksJSON {
            let collection = JWTKeyCollection()
            let jwks: JWKS
            do {
                jwks = try JSONDecoder().decode(JWKS.self, from: Data(jwksJSON.utf8))
            } catch {
                throw ServerError(.invalidArgument, "The JWKS document cannot be read (it must be {\"keys\": [...]}): \(error)", underlying: error)
            }
            // An encryption key (RSA-OAEP) may sit in the same document; it signs nothing.
            for jwk in jwks.keys where jwk.algorithm != .rsaOAEP {
                guard let kid = jwk.keyIdentifier?.string else {
                    throw ServerError(.invalidArgument, "A key in the JWKS has no kid; every key needs one, since tokens name their key by it.")
                }
                guard identityProvider[kid] == nil else {
                    throw ServerError(.invalidArgument, "Two keys in the JWKS have the kid \(TokenError.quoted(kid)); a token could not say which one signed it.")
                }
                guard let algorithm = Self.algorithm(of: jwk) else {
                    throw ServerError(.invalidArgument, "The JWKS key \(TokenError.quoted(kid)) names no alg and its type implies none; add \"alg\" to it.")
                }
                do {
                    try await collection.add(jwk: jwk)
                    // A key without `alg` gets its verifier made for `algorithm` now, before any
                    // token is seen: jwt-kit would otherwise make it for the first token's `alg`
                    // and keep it.
                    let verifier = try await collection.getKey(for: JWKIdentifier(string: kid), alg: algorithm)
                    guard verifier.name == algorithm else {
                        throw ServerError(.invalidArgument, "The JWKS key \(TokenError.quoted(kid)) verifies \(verifier.name), not its alg \(algorithm).")
                    }
                    identityProvider[kid] = Key(algorithm: algorithm, verifier: verifier, source: .identityProvider, name: "the JWKS key \(TokenError.quoted(kid))")
                } catch let error as ServerError {
                    throw error
                } catch {
                    throw ServerError(.invalidArgument, "The JWKS key \(TokenError.quoted(kid)) cannot be used for \(algorithm): \(error)", underlying: error)
                }
            }
        }
        return TokenKeys(secret: secretKey, identityProvider: identityProvider)
    }

    /// The algorithm `jwk` verifies: its `alg`, else the one its type and curve imply.
    private static func algorithm(of jwk: JWK) -> String? {
        if let algorithm = jwk.algorithm { return algorithm.rawValue }
        switch jwk.keyType {
        case .rsa: return "RS256"
        case .ecdsa:
            switch jwk.curve?.rawValue {
            case "P-256": return "ES256"
            case "P-384": return "ES384"
            case "P-521": return "ES512"
            default: return nil
            }
        case .octetKeyPair: return "EdDSA"
        default: return nil
        }
    }

    /// The key that verifies `token`: the JWKS key its `kid` names, else the secret; its `alg`
    /// must be that key's algorithm.
    ///
    /// - Throws: ``TokenError`` `malformed` for a header without a string `alg`,
    ///   `unsupportedHeader` for a `crit` header, `unknownKey` for a `kid` not in the JWKS (or no
    ///   `kid` where no secret is configured), `algorithmMismatch` when `alg` is not the key's.
    func key(for token: CompactToken) throws(TokenError) -> Key {
        guard let algorithm = try token.headerString("alg") else {
            throw TokenError(.malformed, "The token's header names no alg.")
        }
        // RFC 7515 §4.1.11: a recipient must refuse extensions it does not understand.
        guard token.header.immediateChild(ChildKey("crit")).isEmpty else {
            throw TokenError(.unsupportedHeader, "The token's header lists crit extensions; this server supports none.")
        }
        let key: Key
        if let kid = try token.headerString("kid") {
            guard let found = identityProvider[kid] else {
                let hint = identityProvider.isEmpty
                    ? " This server has no JWKS; tokens signed with its secret carry no kid."
                    : " Fetch a fresh token: the provider may have rotated its keys."
                throw TokenError(.unknownKey, "The token names the key \(TokenError.quoted(kid)), which is not in the server's JWKS.\(hint)")
            }
            key = found
        } else {
            guard let secret else {
                throw TokenError(.unknownKey, "The token names no key (kid); tokens from the identity provider must name the JWKS key that signed them.")
            }
            key = secret
        }
        guard algorithm == key.algorithm else {
            throw TokenError(
                .algorithmMismatch,
                "The token's header says alg \(TokenError.quoted(algorithm)), but \(key.name) verifies only \(key.algorithm); sign the token with \(key.algorithm).")
        }
        return key
    }
}
