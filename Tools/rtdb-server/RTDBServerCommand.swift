import ArgumentParser
import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import RealtimeServer
import ServiceLifecycle
import UnixSignals

/// `rtdb-server`: runs the Realtime Database server until SIGINT or SIGTERM.
@main
struct RTDBServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-server",
        abstract: "A self-hosted Firebase Realtime Database server (wire protocol v5 over WebSocket, REST API with streaming).")

    @Option(help: "The host to bind; localhost binds both 127.0.0.1 and ::1.")
    var host = "localhost"

    @Option(help: "The port; 0 picks a free port and prints it.")
    var port = 9000

    @Option(help: "Where each namespace's store lives.")
    var dataDir = "./.rtdb-data"

    @Option(help: "The storage backend: sqlite, lmdb, leveldb or memory.")
    var backend = "sqlite"

    @Option(help: "The namespace of requests that name none (no ?ns=).")
    var defaultNamespace = "default"

    @Option(help: "A security rules JSON file installed in namespaces that have none.")
    var rules: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(help: "Bytes that may wait for one client (WebSocket or event stream) before it is disconnected as too slow.")
    var maxQueuedBytesPerConnection = 64 * 1024 * 1024

    @Option(help: "Bytes that may wait for all clients together; the client whose message would pass it is disconnected.")
    var maxQueuedBytesTotal = 512 * 1024 * 1024

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        var rulesJSON: String?
        if let rules {
            guard let text = try? String(contentsOfFile: rules, encoding: .utf8) else {
                throw ValidationError("cannot read the rules file \(rules)")
            }
            rulesJSON = text
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
        let configuration = ServerConfiguration(
            host: host, port: port, dataDirectory: dataDir, backend: backend, defaultNamespace: defaultNamespace,
            maxQueuedBytesPerConnection: maxQueuedBytesPerConnection, maxQueuedBytesTotal: maxQueuedBytesTotal,
            rulesJSON: rulesJSON, logLevel: level)
        let backends = StorageBackends([.sqlite, .lmdb, .leveldb, .memory])
        guard backends.names.contains(backend) else {
            throw ValidationError("--backend must be one of \(backends.names.joined(separator: ", ")), not \(backend)")
        }
        let server = RealtimeServer(configuration: configuration, backends: backends, logger: logger)
        let announcer = Task {
            guard let port = try? await server.port() else { return }
            let line = "rtdb-server listening on http://\(host):\(port) (backend \(backend), data in \(dataDir); namespaces via ?ns=, default \(defaultNamespace))\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        defer { announcer.cancel() }
        let group = ServiceGroup(
            configuration: .init(services: [server], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
