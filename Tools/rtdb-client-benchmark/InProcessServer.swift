import Foundation
import Logging
import Persistence
import PersistenceSQLite
import RealtimeServer
import ServerCore

/// An rtdb-server running in this process on a free loopback port, over the memory store.
struct InProcessServer {
    let server: RealtimeServer
    let task: Task<Void, any Error>
    let port: Int
    let scratch: ScratchDirectory

    /// Starts a server and waits until it listens.
    static func start() async throws -> InProcessServer {
        let scratch = try ScratchDirectory("server")
        var logger = Logger(label: "rtdb-client-benchmark.server")
        // Stopping by cancellation makes Hummingbird log its child channels' cancellation as errors.
        logger.logLevel = .critical
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: scratch.path, backend: "memory", logLevel: .critical)
        let server = RealtimeServer(configuration: configuration, backends: StorageBackends([.memory, .sqlite]), logger: logger)
        let task = Task { try await server.run() }
        let port = try await server.port()
        return InProcessServer(server: server, task: task, port: port, scratch: scratch)
    }

    /// The client URL of `namespace` on this server.
    func url(namespace: String) -> String { "http://127.0.0.1:\(port)?ns=\(namespace)" }

    /// Stops the server and removes its data directory.
    func stop() async {
        task.cancel()
        _ = try? await task.value
        scratch.remove()
    }
}
