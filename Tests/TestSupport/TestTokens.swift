import Crypto
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

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
