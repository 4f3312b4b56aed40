import Crypto
import CryptoExtras
public import Foundation

/// HS256 user tokens signed with a test secret, and the secret file rtdb-server reads
/// (`--auth-secret-file`), for tests that authenticate for real.
public enum TestTokens {
    /// The secret the test server is started with.
    public static let secret = "rtdb-test-secret-0123456789abcdef"

    /// A file holding ``secret`` (written once per process, removed when the process exits).
    public static let secretFile: String = {
        let path = NSTemporaryDirectory() + "rtdb-test-secret-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(secret.utf8))
        // Servers of any test may read it until the end: no test owns it, the process does.
        removeAtExit(path)
        return path
    }()

    /// The rtdb-server arguments that make it verify these tokens.
    public static var serverArguments: [String] { ["--auth-secret-file", secretFile] }

    /// A token for `subject` expiring in `seconds` (negative: already expired), signed with
    /// `secret` (another secret gives a forged token), with `claims` added (a claim of `NSNull()`
    /// is left out).
    ///
    /// `algorithm` is what the header says; the signature is HMAC-SHA256 whatever it says (as a
    /// forger would make it), and none for `none`.
    public static func token(subject: String = "user-1", expiresIn seconds: TimeInterval = 3600, claims: [String: Any] = [:],
                             secret: String = TestTokens.secret, algorithm: String = "HS256") -> String {
        let now = Date().timeIntervalSince1970
        var payload: [String: Any] = ["sub": subject, "user_id": subject, "iat": Int(now) - 10, "exp": Int(now + seconds)]
        for (key, value) in claims { payload[key] = value is NSNull ? nil : value }
        return try! compact(header: ["alg": algorithm, "typ": "JWT"], payload: payload,
                            signature: algorithm == "none" ? { _ in Data() } : hmac(secret))
    }

    /// A compact JWT of `header` and `payload` (JSON objects), with `signature` of the signing
    /// input (`header.payload`) as its third part.
    public static func compact(header: [String: Any], payload: [String: Any],
                               signature: (Data) throws -> Data) throws -> String {
        let input = "\(try encodedJSON(header)).\(try encodedJSON(payload))"
        return "\(input).\(base64URL(try signature(Data(input.utf8))))"
    }

    /// `object` as JSON in base64url.
    public static func encodedJSON(_ object: Any) throws -> String {
        base64URL(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]))
    }

    /// Signs with HMAC-SHA256 (or HMAC-SHA512 for `bits` 512) keyed by `secret`.
    public static func hmac(_ secret: String, bits: Int = 256) -> @Sendable (Data) -> Data {
        { input in
            let key = SymmetricKey(data: Data(secret.utf8))
            return bits == 512 ? Data(HMAC<SHA512>.authenticationCode(for: input, using: key))
                : Data(HMAC<SHA256>.authenticationCode(for: input, using: key))
        }
    }

    /// `data` in base64url without padding, as JWTs and JWKs write it.
    public static func base64URL(_ data: some DataProtocol) -> String {
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

    /// The JWKS document (`{"keys": [...]}`) with both public keys; with `namingAlgorithms`
    /// false the keys carry no `alg` (as some providers publish them).
    public func jwksJSON(namingAlgorithms: Bool = true) throws -> String {
        let ec = ecKey.publicKey.rawRepresentation  // x || y
        var keys: [[String: String]] = [
            ["kty": "EC", "crv": "P-256", "kid": "ec-1", "alg": "ES256", "use": "sig",
             "x": Self.base64URL(ec.prefix(32)), "y": Self.base64URL(ec.suffix(32))],
            ["kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig",
             "n": Self.base64URL(try rsaModulus()), "e": Self.base64URL(try rsaKey.publicKey.getKeyPrimitives().publicExponent)],
        ]
        if !namingAlgorithms {
            for index in keys.indices { keys[index]["alg"] = nil }
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: ["keys": keys]), as: UTF8.self)
    }

    /// The RSA public key's modulus (big-endian bytes).
    public func rsaModulus() throws -> Data { try rsaKey.publicKey.getKeyPrimitives().modulus }

    /// A token with `claims`, signed with the EC key (`ES256`) or the RSA key (`RS256`).
    public func token(_ algorithm: String, claims: [String: Any]) throws -> String {
        try TestTokens.compact(header: ["alg": algorithm, "typ": "JWT", "kid": algorithm == "ES256" ? "ec-1" : "rsa-1"],
                               payload: claims, signature: signature(algorithm))
    }

    /// Signs with the EC key (`ES256`, raw r || s) or the RSA key (`RS256`, PKCS #1 v1.5).
    public func signature(_ algorithm: String) -> (Data) throws -> Data {
        { [ecKey = self.ecKey, rsaKey = self.rsaKey] input in
            algorithm == "ES256"
                ? try ecKey.signature(for: input).rawRepresentation
                : try rsaKey.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    private static func base64URL(_ data: some DataProtocol) -> String { TestTokens.base64URL(data) }
}
