public import Logging

/// How an rtdb-server runs.
public struct ServerConfiguration: Sendable {
    /// The host to bind. `localhost` binds both 127.0.0.1 and ::1 (clients may resolve it to either).
    public var host: String
    /// The port; 0 picks a free one (see ``RealtimeServer/port()``).
    public var port: Int
    /// Where each namespace's store lives (one directory per namespace).
    public var dataDirectory: String
    /// The storage backend's name (`sqlite`, `lmdb`, `leveldb` or `memory`).
    public var backend: String
    /// The namespace of requests that name none.
    public var defaultNamespace: String
    /// The most bytes that may wait to be sent to one client before it is disconnected as too slow.
    public var maxQueuedBytesPerConnection: Int
    /// The most bytes that may wait to be sent to all clients together; a client whose message
    /// would pass it is disconnected as too slow.
    public var maxQueuedBytesTotal: Int
    /// How often an event stream sends `keep-alive`.
    public var keepAliveInterval: Duration
    /// Security rules JSON to install in every namespace that has none (enforcement comes with the rules issue).
    public var rulesJSON: String?
    /// The log level.
    public var logLevel: Logger.Level

    /// A configuration; every value has a default.
    public init(
        host: String = "localhost", port: Int = 9000, dataDirectory: String = "./.rtdb-data", backend: String = "sqlite",
        defaultNamespace: String = "default", maxQueuedBytesPerConnection: Int = 64 * 1024 * 1024,
        maxQueuedBytesTotal: Int = 512 * 1024 * 1024,
        keepAliveInterval: Duration = .seconds(30), rulesJSON: String? = nil, logLevel: Logger.Level = .info
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.backend = backend
        self.defaultNamespace = defaultNamespace
        self.maxQueuedBytesPerConnection = maxQueuedBytesPerConnection
        self.maxQueuedBytesTotal = maxQueuedBytesTotal
        self.keepAliveInterval = keepAliveInterval
        self.rulesJSON = rulesJSON
        self.logLevel = logLevel
    }

    /// The addresses to bind for ``host``.
    var bindHosts: [String] {
        host == "localhost" ? ["127.0.0.1", "::1"] : [host]
    }

    /// Whether every bound address is a loopback address, so only this machine can connect.
    public var isLoopbackOnly: Bool {
        bindHosts.allSatisfy { $0 == "::1" || $0.hasPrefix("127.") }
    }
}
