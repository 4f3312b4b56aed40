import Crypto
import CryptoExtras
public import Foundation

/// HS256 user tokens signed with a test secret, and the secret file rtdb-server reads
/// (`--auth-secret-file`), for tests that authenticate for real.
public enum TestTokens {
    /// The secret the test server is started with.
    public static let secret = "rtdb-test-secret-0123456789abcdef"

    /// A file holding ``secret`` (written once per process).
    public static let secretFile: String = {
        let path = NSTemporaryDirectory() + "rtdb-test-secret-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(secret.utf8))
        return path
    }()

    /// The rtdb-server arguments that make it verify these tokens.
    public static var serverArguments: [String] { ["--auth-secret-file", secretFile] }

    /// A token for `subject` expiring in `seconds` (negative: already expired), signed with
    /// `secret` (another secret gives a forged token), with `claims` added.
    public static func token(subject: String = "user-1", expiresIn seconds: TimeInterval = 3600, claims: [String: Any] = [:],
                             secret: String = TestTokens.secret, algorithm: String = "HS256") -> String {
        let now = Date().timeIntervalSince1970
        var payload: [String: Any] = ["sub": subject, "user_id": subject, "iat": Int(now) - 10, "exp": Int(now + seconds)]
        for (key, value) in claims { payload[key] = value }
        let header = base64URL(try! JSONSerialization.data(withJSONObject: ["alg": algorithm, "typ": "JWT"], options: [.sortedKeys]))
        let body = base64URL(try! JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        guard algorithm == "HS256" else { return "\(header).\(body)." }
        let signature = HMAC<SHA256>.authenticationCode(for: Data("\(header).\(body)".utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(header).\(body).\(base64URL(Data(signature)))"
    }

    /// `data` in base64url without padding, as JWTs and JWKs write it.
    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// An ES256 key and an RS256 key, published as a JWKS document, that sign user tokens as an
/// identity provider would (keys picked by `kid`).
public struct TestIdentityProvider: Sendable {
    private let ecKey = P256.Signing.PrivateKey()
    private let rsaKey: _RSA.Signing.PrivateKey

    public init() throws { rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    /// The JWKS document (`{"keys": [...]}`) with both public keys.
    public func jwksJSON() throws -> String {
        let ec = ecKey.publicKey.rawRepresentation  // x || y
        let rsa = try rsaKey.publicKey.getKeyPrimitives()
        let keys: [[String: String]] = [
            ["kty": "EC", "crv": "P-256", "kid": "ec-1", "alg": "ES256", "use": "sig",
             "x": Self.base64URL(ec.prefix(32)), "y": Self.base64URL(ec.suffix(32))],
            ["kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig",
             "n": Self.base64URL(rsa.modulus), "e": Self.base64URL(rsa.publicExponent)],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: ["keys": keys]), as: UTF8.self)
    }

    /// A token with `claims`, signed with the EC key (`ES256`) or the RSA key (`RS256`).
    public func token(_ algorithm: String, claims: [String: Any]) throws -> String {
        let kid = algorithm == "ES256" ? "ec-1" : "rsa-1"
        let header = Self.base64URL(try JSONSerialization.data(withJSONObject: ["alg": algorithm, "typ": "JWT", "kid": kid], options: [.sortedKeys]))
        let body = Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = Data("\(header).\(body)".utf8)
        let signature: Data =
            algorithm == "ES256"
            ? try ecKey.signature(for: input).rawRepresentation
            : try rsaKey.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        return "\(header).\(body).\(Self.base64URL(signature))"
    }

    private static func base64URL(_ data: some DataProtocol) -> String { TestTokens.base64URL(data) }
}
