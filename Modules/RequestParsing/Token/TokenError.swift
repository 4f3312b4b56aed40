public import CoreTree
public import SyncProtocol

/// Why a token was refused: a code to switch on and a message that says what to change.
///
/// ``TokenVerifier`` throws it for every credential it does not accept. The message is sent to
/// the client (WebSocket `invalid_token` or `expired_token`, REST 401), so it quotes at most a
/// short piece of the token and never the server's secret or keys.
public struct TokenError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of refusal.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The server verifies no tokens (neither a secret nor a JWKS is configured).
        case notConfigured
        /// The token is longer than 16 KiB.
        case tooLarge
        /// Not a compact JWS: not three base64url parts, or a header or payload that is not a
        /// JSON object.
        case malformed
        /// The header asks for something the verifier does not do (a `crit` extension).
        case unsupportedHeader
        /// No configured key matches the token: its `kid` is missing or unknown.
        case unknownKey
        /// The header's `alg` is not the algorithm of the key that verifies the token.
        case algorithmMismatch
        /// The signature is not the key's signature of the token.
        case badSignature
        /// A registered claim (`exp`, `nbf`, `iat`, `iss`, `aud`, `sub`, ...) has the wrong type
        /// or a value out of range.
        case invalidClaim
        /// The token's `exp` has passed.
        case expired
        /// The token's `nbf` or `iat` is in the future.
        case notYetValid
        /// The token's `iss` is not the configured issuer.
        case wrongIssuer
        /// The token's `aud` does not name the configured audience.
        case wrongAudience
        /// The token names no user.
        case missingIdentity
        /// The token names two different users (`sub`, `uid`, `user_id` disagree).
        case conflictingIdentity
    }

    /// What kind of refusal this is.
    public var code: Code
    /// What went wrong and what to do, for the client and the log.
    public var message: String
    /// The error that caused this one (a JSON parse error, a key's error), if any.
    public var underlyingError: (any Error)?

    /// Makes an error, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    /// The status sent on the WebSocket: `expired_token` for an expired token, otherwise
    /// `invalid_token`.
    public var wireStatus: WireStatus { code == .expired ? .expiredToken : .invalidToken }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension TokenError {
    /// `text` cut to a length fit for a message (a token's `kid` or `alg` may be kilobytes long).
    package static func quoted(_ text: String) -> String {
        let limit = 64
        let cut = text.count > limit ? String(text.prefix(limit)) + "..." : text
        return "\"\(cut)\""
    }
}
