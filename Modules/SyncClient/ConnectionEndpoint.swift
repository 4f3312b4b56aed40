import SyncProtocol
import Foundation

/// Where to connect: a server (or emulator) and the database namespace on it.
public struct ConnectionEndpoint: Sendable, Hashable {
    /// The host name or IP address (an IPv6 address may be given with or without brackets).
    public var host: String
    /// The TCP port.
    public var port: Int
    /// Whether to use TLS (`wss`).
    public var secure: Bool
    /// The database namespace, sent as `ns`.
    public var namespace: String

    /// Makes an endpoint.
    public init(host: String, port: Int, secure: Bool, namespace: String) {
        self.host = host
        self.port = port
        self.secure = secure
        self.namespace = namespace
    }

    /// The WebSocket URL: `ws[s]://host:port/.ws?v=5&ns=<namespace>[&ls=<lastSessionID>]`.
    ///
    /// The namespace and session id are percent-encoded as query values.
    public func webSocketURL(lastSessionID: String?) -> String {
        let scheme = secure ? "wss" : "ws"
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        var url = "\(scheme)://\(hostPart):\(port)/.ws?v=\(WireLimits.protocolVersion)&ns=\(Self.encode(namespace))"
        if let lastSessionID { url += "&ls=\(Self.encode(lastSessionID))" }
        return url
    }

    /// `value` percent-encoded for use as a query value.
    private static func encode(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#?/")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
