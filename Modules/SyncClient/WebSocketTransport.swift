import HummingbirdWSClient
public import Logging
import SyncProtocol

/// Connects over WebSocket (HummingbirdWSClient), with TLS when the endpoint is secure.
public struct WebSocketTransport: Transport {
    /// The largest WebSocket frame or message accepted from the server, in bytes.
    public var maxFrameSize: Int = 1 << 24
    private let logger: Logger

    /// Makes a transport that logs through `logger`.
    public init(logger: Logger = Logger(label: "rtdb.transport")) {
        self.logger = logger
    }

    /// Opens a WebSocket to `endpoint`'s ``ConnectionEndpoint/webSocketURL(lastSessionID:)``.
    public func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection {
        try await WebSocketTransportConnection.open(
            url: endpoint.webSocketURL(lastSessionID: lastSessionID), maxFrameSize: maxFrameSize, logger: logger)
    }
}
