import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
public import Logging
import SecurityRules
import NIOCore
import NIOSSL
import NIOWebSocket
public import Persistence
public import ServiceLifecycle
import Synchronization
import SyncProtocol
public import ServerCore

/// The Realtime Database server: the WebSocket protocol (v5) at `/.ws` and the REST API with
/// streaming at `/<path>.json`, for every namespace, over durable storage.
///
/// Run it as a service (in a `ServiceGroup`, which gives graceful shutdown on signals) or call
/// ``run()`` in a task and cancel it. Stores are closed cleanly when it stops.
public final class RealtimeServer: Service, Sendable {
    /// The configuration it runs with.
    public let configuration: ServerConfiguration
    private let backends: StorageBackends
    private let storeProvider: (any ServerStoreProvider)?
    private let logger: Logger
    private let readiness = Mutex<Readiness>(.waiting([]))
    /// What the server holds for its clients now (connections, streams, queued bytes).
    public let activity: ServerActivity

    private enum Readiness {
        case waiting([CheckedContinuation<Int, any Error>])
        case ready(Int)
        case failed(any Error)
    }

    /// A server for `configuration`, opening stores with the backends in `backends`, or, when
    /// `storeProvider` is given, with it (PostgreSQL: namespaces shared with other nodes).
    public init(configuration: ServerConfiguration, backends: StorageBackends, storeProvider: (any ServerStoreProvider)? = nil,
                logger: Logger? = nil) {
        self.configuration = configuration
        self.backends = backends
        self.storeProvider = storeProvider
        activity = ServerActivity(maxQueuedBytesTotal: configuration.maxQueuedBytesTotal)
        var logger = logger ?? Logger(label: "rtdb-server")
        logger.logLevel = configuration.logLevel
        self.logger = logger
    }

    /// The port the server listens on, once it listens (waits until then).
    ///
    /// - Throws: the error that kept the server from starting.
    public func port() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let immediate: Result<Int, any Error>? = readiness.withLock { state in
                switch state {
                case .waiting(var waiters):
                    waiters.append(continuation)
                    state = .waiting(waiters)
                    return nil
                case .ready(let port): return .success(port)
                case .failed(let error): return .failure(error)
                }
            }
            if let immediate { continuation.resume(with: immediate) }
        }
    }

    private func settle(_ result: Result<Int, any Error>) {
        let waiters: [CheckedContinuation<Int, any Error>] = readiness.withLock { state in
            guard case .waiting(let waiters) = state else { return [] }
            switch result {
            case .success(let port): state = .ready(port)
            case .failure(let error): state = .failed(error)
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// Runs until cancelled or shut down gracefully, then closes every store.
    /// The rules file must compile, and a server reachable from other machines must have one:
    /// without rules a namespace is open to whoever can connect.
    private func checkRules() throws {
        if let rules = configuration.rulesJSON {
            do {
                _ = try RuleSet(parsing: rules)
            } catch {
                throw ServerError(.invalidArgument, "The rules file does not compile: \(error)")
            }
        } else if !configuration.isLoopbackOnly {
            throw ServerError(.invalidArgument,
                "Refusing to listen on \(configuration.host) without security rules: every namespace without stored rules would be open to anyone who can connect. Pass --rules FILE, or listen on a loopback address.")
        } else {
            logger.notice("no rules file: namespaces without stored rules are open to clients on this machine (loopback only)")
        }
    }

    public func run() async throws {
        let stores: NamespaceStores
        let lock: DataDirectoryLock
        let verifier: TokenVerifier
        let tls: NIOSSLContext?
        do {
            try checkRules()
            tls = try configuration.tls.map(RealtimeServer.tlsContext)
            verifier = try await TokenVerifier(configuration.auth, ownerAllowed: configuration.isLoopbackOnly, clock: configuration.clock.date)
            stores = try storeProvider.map { .provided($0) } ?? .embedded(try backends.backend(named: configuration.backend))
            lock = try DataDirectoryLock(path: configuration.dataDirectory)
            // An import killed before it finished leaves its staging directory, or (where the
            // file system cannot exchange directories) the old store moved aside: put the data
            // directory back in order before any namespace opens.
            for namespace in try NamespaceDirectories.recoverInterruptedImports(in: configuration.dataDirectory) {
                logger.notice("cleaned up after an interrupted import", metadata: ["namespace": "\(namespace)"])
            }
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            settle(.failure(error))
            throw error
        }
        // Released once the stores are closed, whoever still holds a reference then.
        defer { lock.release() }
        let warnings = LimitWarnings(logger: logger)
        let registry = NamespaceRegistry(
            configuration: configuration.namespaceSettings, stores: stores, logger: logger, warnings: warnings, metrics: activity.metrics)
        let limits = ResourceLimits.current()
        let maxConnections = configuration.maxConnections
            ?? limits.defaultMaxConnections(openNamespaces: configuration.maxOpenNamespaces)
        let descriptorCeiling = max(maxConnections + 1, limits.connectionDescriptors(openNamespaces: configuration.maxOpenNamespaces))
        logger.info("limits", metadata: [
            "fileDescriptors": "\(limits.fileDescriptors)", "maxConnections": "\(maxConnections)",
            "maxOpenNamespaces": "\(configuration.maxOpenNamespaces)",
        ])
        let connectionLimits = ConnectionGuard.Limits(
            maxConnections: maxConnections, headerTimeout: configuration.headerTimeout, maxHeaderBytes: configuration.maxHeaderBytes)
        let listeners = Listeners(
            registry: registry, limits: connectionLimits, warnings: warnings, descriptorCeiling: descriptorCeiling, verifier: verifier,
            tls: tls, dataDirectoryLock: lock)
        if configuration.isLoopbackOnly {
            logger.notice("admin token 'owner' is accepted: the server is bound to loopback only")
        } else {
            logger.notice("admin token 'owner' is refused: the server is bound to \(configuration.host), not loopback")
        }
        let (clock, metrics) = (configuration.clock, self.activity.metrics)
        let orphanRunner = storeProvider.map { provider in
            Task { [logger] in
                await OrphanedOnDisconnectRunner.run(provider, registry: registry, logger: logger, clock: clock, metrics: metrics)
            }
        }
        defer { orphanRunner?.cancel() }
        let hosts = configuration.bindHosts
        let (activity, shutdownTimeout) = (self.activity, configuration.shutdownTimeout)
        do {
            try await withGracefulShutdownHandler {
                try await serve(hosts: hosts, listeners: listeners)
            } onGracefulShutdown: {
                activity.beginShutdown(deadline: shutdownTimeout)
            }
        } catch {
            await registry.closeAll()
            await storeProvider?.shutdown()
            throw error
        }
        await registry.closeAll()
        await storeProvider?.shutdown()
        logger.info("stores closed; server stopped")
    }

    /// What every listening socket shares.
    private struct Listeners {
        let registry: NamespaceRegistry
        let limits: ConnectionGuard.Limits
        let warnings: LimitWarnings
        let descriptorCeiling: Int
        let verifier: TokenVerifier
        let tls: NIOSSLContext?
        /// Where the server records the address it listens at, once it does.
        let dataDirectoryLock: DataDirectoryLock
    }

    /// The URL a client on this machine reaches the server at: the first bound address (a
    /// loopback one for a wildcard) and `port`.
    static func localAddress(host: String, port: Int, scheme: String) -> String {
        let reachable =
            switch host {
            case "0.0.0.0", "": "127.0.0.1"
            case "::": "::1"
            default: host
            }
        return "\(scheme)://\(reachable.contains(":") ? "[\(reachable)]" : reachable):\(port)"
    }

    /// The TLS context for `files`; an error names the file that could not be used.
    private static func tlsContext(_ files: TLSFiles) throws -> NIOSSLContext {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateChainPath)
        } catch {
            throw ServerError(.invalidArgument, "Cannot read a PEM certificate chain from \(files.certificateChainPath): \(error)")
        }
        guard !chain.isEmpty else {
            throw ServerError(.invalidArgument, "\(files.certificateChainPath) holds no PEM certificate.")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKeyPath, format: .pem)
        } catch {
            throw ServerError(.invalidArgument, "Cannot read a PEM private key from \(files.privateKeyPath): \(error)")
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.applicationProtocols = ["http/1.1"]
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw ServerError(.invalidArgument, "The TLS certificate and key do not make a usable TLS setup (does the key match the certificate?): \(error)")
        }
    }

    private func serve(hosts: [String], listeners: Listeners) async throws {
        let configuration = self.configuration
        let logger = self.logger
            try await withThrowingTaskGroup(of: Void.self) { group in
                let first = makeApplication(host: hosts[0], port: configuration.port, listeners: listeners) { [self] port in
                    settle(.success(port))
                }
                group.addTask { [self] in
                    do {
                        try await first.run()
                    } catch {
                        settle(.failure(error))
                        throw error
                    }
                }
                let port = try await self.port()
                // `rtdb-server export` finds a served namespace's server here.
                listeners.dataDirectoryLock.record(
                    address: RealtimeServer.localAddress(host: hosts[0], port: port, scheme: configuration.scheme))
                for host in hosts.dropFirst() {
                    let other = makeApplication(host: host, port: port, listeners: listeners) { _ in }
                    group.addTask { [logger] in
                        do {
                            try await other.run()
                        } catch {
                            logger.warning("could not listen on \(host) port \(port): \(error)")
                        }
                    }
                }
                try await group.waitForAll()
            }
    }

    private func makeApplication(
        host: String, port: Int, listeners: Listeners, onPort: @escaping @Sendable (Int) -> Void
    ) -> some ApplicationProtocol {
        let configuration = self.configuration
        let logger = self.logger
        let activity = self.activity
        let registry = listeners.registry
        let verifier = listeners.verifier
        let responder = RESTResponder(registry: registry, configuration: configuration, activity: activity, verifier: verifier, logger: logger)
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: HTTP1Channel.Configuration(
                // The 100 Continue is written nearer the socket than the deadline handler, which
                // takes any response head passing it for the start of the request's response.
                additionalChannelHandlers: [ExpectContinueHandler(maxBodyBytes: RESTBody.maxBytes), RequestDeadlineHandler(timeout: configuration.bodyTimeout)],
                idleTimeout: TimeAmount(configuration.idleTimeout),
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: configuration.maxHeaderBytes, maxHeaderListSize: configuration.maxHeaderBytes)),
            ws: WebSocketServerConfiguration(
                maxFrameSize: WireLimits.maxMessageBytes, autoPing: .enabled(timePeriod: configuration.webSocketPingInterval)))
        typealias UpgradeDecision = ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>>
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) async throws -> UpgradeDecision = { request, channel, logger in
            let target = request.path ?? "/"
            let components = URLComponents(string: target)
            guard components?.path == "/.ws" else { return .dontUpgrade }
            let namespace = components?.queryItems?.first(where: { $0.name == "ns" })?.value
            let database: NamespaceDatabase
            do throws(ServerError) {
                database = try await registry.lease(for: namespace, within: configuration.handshakeTimeout)
            } catch {
                logger.info("refused WebSocket", metadata: ["error": "\(error)"])
                guard error.code == .unavailable else { return .dontUpgrade }
                // Not now (the namespace is opening, or too many are open): close with
                // 1013 "try again later" and the reason; the client reconnects with backoff.
                let reason = String(decoding: error.message.utf8.prefix(120), as: UTF8.self)
                return .upgrade([:]) { (_: WebSocketInboundStream, outbound: WebSocketOutboundWriter, _: HTTP1WebSocketUpgradeChannel.Context) in
                    try await outbound.close(.unknown(1013), reason: reason)
                }
            }
            let handshakeHost = request.authority ?? "\(host):\(port)"
            return .upgrade([:]) { inbound, outbound, context in
                await WebSocketConnection.serve(
                    inbound: inbound, outbound: outbound, channel: channel, database: database, host: handshakeHost,
                    configuration: configuration, activity: activity, verifier: verifier, logger: context.logger)
                await registry.release(database)
            }
        }
        let server = HTTPServerBuilder { httpResponder in
            GuardedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: httpResponder, configuration: channelConfiguration, shouldUpgrade: shouldUpgrade),
                activity: activity, limits: listeners.limits, warnings: listeners.warnings, tls: listeners.tls)
        }
        return Application(
            responder: responder,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "rtdb-server",
                availableConnectionsDelegate: DescriptorBackoff(ceiling: listeners.descriptorCeiling, warnings: listeners.warnings)),
            onServerRunning: { channel in
                onPort(channel.localAddress?.port ?? port)
            },
            logger: logger
        )
    }
}
