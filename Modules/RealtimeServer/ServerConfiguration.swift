public import Logging
public import ServerCore

/// How an rtdb-server runs.
///
/// Every limit has a default sized for one machine serving many clients; the README's "Operating
/// limits" table says what happens at each.
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
    /// How credentials are verified (a secret, a JWKS document); none by default.
    public var auth = AuthConfiguration()
    /// The log level.
    public var logLevel: Logger.Level
    /// The level access log lines are logged at (one per HTTP request, one per WebSocket connect
    /// and close): they show when it is at or above ``logLevel``.
    public var accessLogLevel: Logger.Level = .info
    /// How long a new connection may take to send its first request's head (line and headers);
    /// then it is answered 408 (or closed, if it sent nothing).
    public var headerTimeout: Duration
    /// The most bytes a request's head may have; a longer one is answered 431.
    public var maxHeaderBytes: Int
    /// How long a request may take to send its whole body once its head is in; then it is answered 408.
    public var bodyTimeout: Duration
    /// How long a kept-alive HTTP connection may sit between requests before it is closed.
    public var idleTimeout: Duration
    /// How long a WebSocket upgrade may wait for its namespace to open before it is refused with 503.
    public var handshakeTimeout: Duration
    /// How often each WebSocket client is pinged. A client that has not answered one ping by the
    /// next is closed and its onDisconnect operations run, so a client whose network went silent
    /// (no FIN, no RST) is dropped within two intervals. `--idle-timeout` does not apply once a
    /// connection is a WebSocket.
    public var webSocketPingInterval: Duration = .seconds(30)
    /// Whether stamped writes are applied at most once (the `once` protocol extension, announced
    /// in the handshake; see ``SyncProtocol/WriteStamp``). Off, the server speaks plain Firebase.
    public var exactlyOnceWrites = true
    /// How long a namespace remembers a client's stamped writes after its last one.
    public var writerRetention: Duration = NamespaceDatabase.defaultWriterRetention
    /// The most client connections open at once; more are answered 503 and closed. `nil` derives
    /// it from the file descriptor limit (see ``ResourceLimits``).
    public var maxConnections: Int?
    /// The most namespaces open at once: opening another closes the least recently used idle one,
    /// or, when every one is in use, refuses with 503.
    public var maxOpenNamespaces: Int
    /// The bytes of data (estimated) all open namespaces keep in memory together; the store holds
    /// the rest. Data listeners watch stays in memory beyond it.
    public var cacheBytes: Int = 128 * 1024 * 1024
    /// Whether each embedded namespace's store is checked as a whole (the backend's file check
    /// and every row's checksum) in the background after it opens; damage found marks the
    /// namespace damaged. Opening never waits for the check.
    public var backgroundStoreCheck = true
    /// The most listens one WebSocket connection may hold.
    public var maxListensPerConnection: Int
    /// The most bytes of onDisconnect writes one WebSocket connection may hold.
    public var maxOnDisconnectBytesPerConnection: Int
    /// The certificate and key to serve TLS with (`https://`, `wss://`); nil serves plain HTTP.
    public var tls: TLSFiles?
    /// The clock for time stamps and the server's own timers (the system clock by default; tests
    /// pass one they advance by hand).
    public var clock: ServerClock = .system
    /// How long a graceful shutdown waits for clients after telling them to go (event streams get
    /// a final event, WebSockets a close frame); then the rest are cut off.
    public var shutdownTimeout: Duration

    /// A configuration; every value has a default.
    public init(
        host: String = "localhost", port: Int = 9000, dataDirectory: String = "./.rtdb-data", backend: String = "sqlite",
        defaultNamespace: String = "default", maxQueuedBytesPerConnection: Int = 64 * 1024 * 1024,
        maxQueuedBytesTotal: Int = 512 * 1024 * 1024,
        keepAliveInterval: Duration = .seconds(30), rulesJSON: String? = nil, logLevel: Logger.Level = .info,
        headerTimeout: Duration = .seconds(10), maxHeaderBytes: Int = 64 * 1024, bodyTimeout: Duration = .seconds(120),
        idleTimeout: Duration = .seconds(120), handshakeTimeout: Duration = .seconds(10), maxConnections: Int? = nil,
        maxOpenNamespaces: Int = 64, maxListensPerConnection: Int = 10_000,
        maxOnDisconnectBytesPerConnection: Int = 16 * 1024 * 1024, shutdownTimeout: Duration = .seconds(10)
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
        self.headerTimeout = headerTimeout
        self.maxHeaderBytes = maxHeaderBytes
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.handshakeTimeout = handshakeTimeout
        self.maxConnections = maxConnections
        self.maxOpenNamespaces = maxOpenNamespaces
        self.maxListensPerConnection = maxListensPerConnection
        self.maxOnDisconnectBytesPerConnection = maxOnDisconnectBytesPerConnection
        self.shutdownTimeout = shutdownTimeout
    }

    /// What the namespace registry needs of this configuration.
    var namespaceSettings: NamespaceRegistry.Settings {
        var settings = NamespaceRegistry.Settings(
            defaultNamespace: defaultNamespace, dataDirectory: dataDirectory, maxOpenNamespaces: maxOpenNamespaces,
            rulesJSON: rulesJSON, writerRetention: writerRetention, clock: clock, cacheBytes: cacheBytes)
        settings.backgroundCheck = backgroundStoreCheck
        return settings
    }

    /// `https` when the server speaks TLS, else `http`.
    public var scheme: String { tls == nil ? "http" : "https" }

    /// The addresses to bind for ``host``.
    var bindHosts: [String] {
        host == "localhost" ? ["127.0.0.1", "::1"] : [host]
    }

    /// Whether every bound address is a loopback address, so only this machine can connect.
    public var isLoopbackOnly: Bool {
        bindHosts.allSatisfy { $0 == "::1" || $0.hasPrefix("127.") }
    }
}

/// The PEM files a TLS server presents: its certificate chain (the server's certificate first,
/// then any intermediates) and the private key.
public struct TLSFiles: Sendable, Hashable {
    /// The certificate chain, PEM.
    public var certificateChainPath: String
    /// The private key, PEM (RSA or EC, unencrypted).
    public var privateKeyPath: String

    /// Files for a TLS server.
    public init(certificateChainPath: String, privateKeyPath: String) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
    }
}
