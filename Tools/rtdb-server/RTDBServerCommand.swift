import ArgumentParser
import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import PostgresServerStore
import RealtimeServer
import ServerCore
import ServiceLifecycle
import UnixSignals

/// `rtdb-server`: runs the Realtime Database server until SIGINT or SIGTERM.
@main
struct RTDBServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-server",
        abstract: "A self-hosted Firebase Realtime Database server (wire protocol v5 over WebSocket, REST API with streaming).",
        subcommands: [ImportCommand.self, ExportCommand.self, CheckCommand.self])

    @Option(help: ArgumentHelp(
        "A JSON config file of option names and values ({\"port\": 9000, \"exactly-once\": false}); also RTDB_CONFIG. The command line wins over RTDB_<OPTION> environment variables, which win over the file.",
        valueName: "file"))
    var config: String?

    @Flag(help: "Print the settings in effect (as a config file) and where each came from, then exit.")
    var printConfig = false

    @Option(help: "The host to bind; localhost binds both 127.0.0.1 and ::1.")
    var host = "localhost"

    @Option(help: "The port; 0 picks a free port and prints it.")
    var port = 9000

    @Option(help: "Where each namespace's store lives.")
    var dataDir = "./.rtdb-data"

    @Option(help: "The storage backend: sqlite, lmdb, leveldb, memory, or postgres (namespaces shared with other nodes on one PostgreSQL database).")
    var backend = "sqlite"

    @Option(help: "With --backend postgres: the database, postgres://user:password@host:5432/database (also RTDB_POSTGRES_URL).")
    var postgresUrl: String?

    @Option(help: "The namespace of requests that name none (no ?ns=).")
    var defaultNamespace = "default"

    @Option(help: "A security rules file installed in namespaces that have none and enforced; required to listen beyond loopback.")
    var rules: String?

    @Option(help: "A file holding the secret that signs HS256 user tokens; the secret itself is an administrator credential.")
    var authSecretFile: String?

    @Option(help: "A JWKS document whose keys sign user tokens; a token names its key by kid and must use that key's alg (RS256, ES256, ...).")
    var authJwks: String?

    @Option(help: "The issuer (iss) user tokens must name.")
    var authIssuer: String?

    @Option(help: "The audience (aud) user tokens must name.")
    var authAudience: String?

    @Option(help: "A PEM certificate chain to serve TLS with (https://, wss://); needs --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(help: "The level of the access log (a line per HTTP request, WebSocket connect and close); shown when at or above --log-level.")
    var accessLogLevel = "info"

    @Option(help: "Bytes that may wait for one client (WebSocket or event stream) before it is disconnected as too slow.")
    var maxQueuedBytesPerConnection = 64 * 1024 * 1024

    @Option(help: "Bytes that may wait for all clients together; the client whose message would pass it is disconnected.")
    var maxQueuedBytesTotal = 512 * 1024 * 1024

    @Option(help: "Seconds a new connection may take to send its first request's line and headers (then 408).")
    var headerTimeout: Double = 10

    @Option(help: "The most bytes a request's line and headers may have (then 431).")
    var maxHeaderBytes = 64 * 1024

    @Option(help: "Seconds a request may take to send its body once its headers are in (then 408).")
    var bodyTimeout: Double = 120

    @Option(help: "Seconds a kept-alive HTTP connection may sit idle between requests before it is closed.")
    var idleTimeout: Double = 120

    @Option(help: "Seconds a WebSocket upgrade may wait for its namespace to open (then 503).")
    var handshakeTimeout: Double = 10

    @Option(help: "Seconds between pings to each WebSocket client; one that misses a ping is closed by the next and its onDisconnect runs.")
    var wsPingInterval: Double = 30

    @Flag(inversion: .prefixedEnableDisable,
          help: "Apply writes stamped by this project's clients at most once (the `once` protocol extension); disabled, the server speaks plain Firebase.")
    var exactlyOnce = true

    @Flag(inversion: .prefixedEnableDisable,
          help: "Check each namespace's store as a whole (the backend's file check, every row's checksum) in the background after it opens; damage found takes the namespace out of service.")
    var backgroundCheck = true

    @Option(help: "Days a namespace remembers a client's stamped writes after its last one.")
    var writerRetentionDays: Double = 30

    @Option(help: "The most client connections at once (then 503); the default follows the file descriptor limit.")
    var maxConnections: Int?

    @Option(help: "The most namespaces open at once; idle ones are closed to make room (then 503).")
    var maxOpenNamespaces = 64

    @Option(help: "Bytes of data all open namespaces keep in memory together (estimated); data listeners watch stays beyond it. The store holds the rest.")
    var cacheBytes = CacheBudget.defaultLimit

    @Option(help: "The most listens one WebSocket connection may hold.")
    var maxListensPerConnection = 10_000

    @Option(help: "The most bytes of onDisconnect writes one WebSocket connection may hold.")
    var maxOnDisconnectBytesPerConnection = 16 * 1024 * 1024

    @Option(help: "Seconds a graceful shutdown (SIGTERM, SIGINT) waits for clients after asking them to go.")
    var shutdownTimeout: Double = 10

    @Option(help: ArgumentHelp(
        "Move a damaged namespace's store aside (to NAME.damaged-TIME in the data directory) and exit; the namespace starts empty on its next use.",
        valueName: "namespace"))
    var repair: String?

    /// Parses the command line over the environment and the config file (``ConfigurationSources``), then runs.
    static func main() async {
        do {
            let arguments = Array(CommandLine.arguments.dropFirst())
            // import, export and check read only their command line (the server's environment and
            // config file hold options they do not have), and are parsed on their own: through
            // this command, the options both have (--data-dir, --backend) would go to it.
            switch arguments.first {
            case ImportCommand.configuration.commandName:
                var command = try ImportCommand.parseAsRoot(Array(arguments.dropFirst()))
                try await (command as? ImportCommand)?.run() ?? command.run()
                return
            case ExportCommand.configuration.commandName:
                var command = try ExportCommand.parseAsRoot(Array(arguments.dropFirst()))
                try await (command as? ExportCommand)?.run() ?? command.run()
                return
            case CheckCommand.configuration.commandName:
                var command = try CheckCommand.parseAsRoot(Array(arguments.dropFirst()))
                try await (command as? CheckCommand)?.run() ?? command.run()
                return
            default:
                break
            }
            let sources = try await ConfigurationSources(
                commandLine: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment,
                options: try optionKinds())
            let parsed = try parseAsRoot(sources.arguments)
            guard let command = parsed as? RTDBServerCommand else {
                var other = parsed
                try other.run()
                return
            }
            if command.printConfig {
                print(command.effectiveSettings(sources))
                return
            }
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }

    func validate() throws {
        for (name, seconds) in [
            ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout), ("--idle-timeout", idleTimeout),
            ("--handshake-timeout", handshakeTimeout), ("--shutdown-timeout", shutdownTimeout),
            ("--ws-ping-interval", wsPingInterval),
        ] where !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("\(name) must be a number of seconds above 0 and at most 86400, not \(seconds)")
        }
        if (tlsCert == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-cert and --tls-key go together: give both, or neither for plain HTTP")
        }
        guard writerRetentionDays > 0 && writerRetentionDays <= 3650 else {
            throw ValidationError("--writer-retention-days must be above 0 and at most 3650, not \(writerRetentionDays)")
        }
        for (name, value) in [
            ("--max-header-bytes", maxHeaderBytes), ("--max-open-namespaces", maxOpenNamespaces),
            ("--max-listens-per-connection", maxListensPerConnection), ("--cache-bytes", cacheBytes),
            ("--max-on-disconnect-bytes-per-connection", maxOnDisconnectBytesPerConnection),
            ("--max-connections", maxConnections ?? 1),
        ] where value <= 0 {
            throw ValidationError("\(name) must be positive, not \(value)")
        }
    }

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical, not \(logLevel)")
        }
        guard let accessLevel = Logger.Level(rawValue: accessLogLevel) else {
            throw ValidationError("--access-log-level must be one of trace, debug, info, notice, warning, error, critical, not \(accessLogLevel)")
        }
        var rulesJSON: String?
        if let rules {
            guard let text = try? String(contentsOfFile: rules, encoding: .utf8) else {
                throw ValidationError("cannot read the rules file \(rules)")
            }
            rulesJSON = text
        }
        var auth = AuthConfiguration(issuer: authIssuer, audience: authAudience)
        if let authSecretFile {
            guard let text = try? String(contentsOfFile: authSecretFile, encoding: .utf8) else {
                throw ValidationError("cannot read the secret file \(authSecretFile)")
            }
            let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.utf8.count >= 16 else {
                throw ValidationError("the secret in \(authSecretFile) is shorter than 16 bytes; use a long random one")
            }
            auth.secret = secret
        }
        if let authJwks {
            guard let text = try? String(contentsOfFile: authJwks, encoding: .utf8) else {
                throw ValidationError("cannot read the JWKS file \(authJwks)")
            }
            auth.jwksJSON = text
        }
        if let repair {
            let moved = try NamespaceRepair.moveAside(repair, dataDirectory: dataDir)
            print("moved namespace \(repair) aside to \(moved); it starts empty on its next use")
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "rtdb-server")
        guard maxQueuedBytesPerConnection > 0, maxQueuedBytesTotal > 0 else {
            throw ValidationError("--max-queued-bytes-per-connection and --max-queued-bytes-total must be positive")
        }
        var configuration = ServerConfiguration(
            host: host, port: port, dataDirectory: dataDir, backend: backend, defaultNamespace: defaultNamespace,
            maxQueuedBytesPerConnection: maxQueuedBytesPerConnection, maxQueuedBytesTotal: maxQueuedBytesTotal,
            rulesJSON: rulesJSON, logLevel: level,
            headerTimeout: .seconds(headerTimeout), maxHeaderBytes: maxHeaderBytes, bodyTimeout: .seconds(bodyTimeout),
            idleTimeout: .seconds(idleTimeout), handshakeTimeout: .seconds(handshakeTimeout), maxConnections: maxConnections,
            maxOpenNamespaces: maxOpenNamespaces, maxListensPerConnection: maxListensPerConnection,
            maxOnDisconnectBytesPerConnection: maxOnDisconnectBytesPerConnection, shutdownTimeout: .seconds(shutdownTimeout))
        configuration.auth = auth
        configuration.accessLogLevel = accessLevel
        if let tlsCert, let tlsKey { configuration.tls = TLSFiles(certificateChainPath: tlsCert, privateKeyPath: tlsKey) }
        configuration.webSocketPingInterval = .seconds(wsPingInterval)
        configuration.exactlyOnceWrites = exactlyOnce
        configuration.backgroundStoreCheck = backgroundCheck
        configuration.writerRetention = .seconds(writerRetentionDays * 24 * 3600)
        configuration.cacheBytes = cacheBytes
        // The server never asks SQLite how much memory it holds: without the count, each of
        // SQLite's allocations skips a lock every connection shares (a tenth of an import's
        // SQLite time; see ImportCommand.tuneAllocators). Before any store opens.
        SQLiteStore.disableMemoryStatistics()
        let backends = StorageBackends([.sqlite, .lmdb, .leveldb, .memory])
        var provider: PostgresStoreProvider?
        if backend == "postgres" {
            guard let url = postgresUrl ?? ProcessInfo.processInfo.environment["RTDB_POSTGRES_URL"], !url.isEmpty else {
                throw ValidationError("--backend postgres needs --postgres-url postgres://user:password@host:5432/database (or RTDB_POSTGRES_URL)")
            }
            // postgres-nio reports each failed reconnection at info; the provider says what matters.
            var postgresLogger = Logger(label: "rtdb-server.postgres")
            postgresLogger.logLevel = max(level, .warning)
            let made = try PostgresStoreProvider(url: url, logger: postgresLogger)
            do {
                try await made.prepare()
            } catch {
                await made.shutdown()
                throw ValidationError("cannot use PostgreSQL: \(error)")
            }
            provider = made
        } else {
            guard backends.names.contains(backend) else {
                throw ValidationError("--backend must be one of \(backends.names.joined(separator: ", ")), postgres, not \(backend)")
            }
        }
        let server = RealtimeServer(configuration: configuration, backends: backends, storeProvider: provider, logger: logger)
        let announcer = Task {
            guard let port = try? await server.port() else { return }
            let line = "rtdb-server listening on \(configuration.scheme)://\(host):\(port) (backend \(backend), data in \(dataDir); namespaces via ?ns=, default \(defaultNamespace))\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        defer { announcer.cancel() }
        let group = ServiceGroup(
            configuration: .init(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
