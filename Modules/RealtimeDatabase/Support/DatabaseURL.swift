import Foundation
import SyncClient
import SyncProtocol

/// A parsed database URL: where the server is, which namespace, and an optional path.
///
/// Accepted forms: `https://<namespace>.firebaseio.com`, `https://<namespace>.<region>.firebasedatabase.app`,
/// and the emulator / self-hosted form `http://host:port?ns=<namespace>` (without `ns` the namespace is
/// the host's first label, or `default` for `localhost` and IP addresses).
struct DatabaseURL: Sendable, Hashable {
    var endpoint: ConnectionEndpoint
    var path: String

    init(parsing text: String) throws(DatabaseError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty
        else {
            throw DatabaseError(
                .invalidArgument,
                "\"\(text)\" is not a database URL; use https://<namespace>.firebaseio.com or http://host:port?ns=<namespace>.")
        }
        let secure: Bool
        switch scheme {
        case "https", "wss": secure = true
        case "http", "ws": secure = false
        default: throw DatabaseError(.invalidArgument, "Database URL \"\(text)\" must use http or https, not \(scheme).")
        }
        let port = components.port ?? (secure ? 443 : 80)
        let namespace = components.queryItems?.first { $0.name == "ns" }?.value ?? DatabaseURL.defaultNamespace(forHost: host)
        guard !namespace.isEmpty else { throw DatabaseError(.invalidArgument, "Database URL \"\(text)\" names an empty namespace.") }
        endpoint = ConnectionEndpoint(host: host, port: port, secure: secure, namespace: namespace)
        path = components.percentEncodedPath.removingPercentEncoding ?? components.path
    }

    init(endpoint: ConnectionEndpoint, path: String = "") {
        self.endpoint = endpoint
        self.path = path
    }

    static func defaultNamespace(forHost host: String) -> String {
        let isAddress = host == "localhost" || host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        if isAddress { return "default" }
        return String(host.split(separator: ".").first ?? Substring(host))
    }

    /// The URL text for a location, as `DatabaseReference.url` shows it.
    func url(forPath path: String) -> String {
        let scheme = endpoint.secure ? "https" : "http"
        let defaultPort = endpoint.secure ? 443 : 80
        let port = endpoint.port == defaultPort ? "" : ":\(endpoint.port)"
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        let encodedPath = path.split(separator: "/").map {
            String($0).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? String($0)
        }.joined(separator: "/")
        let nsQuery = DatabaseURL.defaultNamespace(forHost: endpoint.host) == endpoint.namespace ? "" : "?ns=\(endpoint.namespace)"
        return "\(scheme)://\(host)\(port)/\(encodedPath)\(nsQuery)"
    }
}
