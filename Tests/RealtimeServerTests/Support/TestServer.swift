import Dispatch
import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import RealtimeServer
import ServerCore
import TestSupport

/// An in-process server on a free loopback port, over the memory store unless told otherwise.
struct TestServer {
    let server: RealtimeServer
    let task: Task<Void, any Error>
    let port: Int

    static let backends = StorageBackends([.memory, .sqlite, .lmdb, .leveldb, OpeningGate.backend])

    static func start(backend: String = "memory", directory: String? = nil, maxQueuedBytes: Int = 64 * 1024 * 1024,
                      maxQueuedBytesTotal: Int = 512 * 1024 * 1024, keepAlive: Duration = .seconds(30),
                      configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        let directory = directory ?? NSTemporaryDirectory() + "rtdb-test-\(UUID().uuidString)"
        var logger = Logger(label: "test-server")
        // Stopping by cancellation makes Hummingbird log its child channels' cancellation as errors.
        logger.logLevel = .critical
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory, backend: backend,
            maxQueuedBytesPerConnection: maxQueuedBytes, maxQueuedBytesTotal: maxQueuedBytesTotal, keepAliveInterval: keepAlive, logLevel: .critical)
        configure(&configuration)
        let server = RealtimeServer(configuration: configuration, backends: backends, logger: logger)
        let task = Task { try await server.run() }
        let port = try await server.port()
        return TestServer(server: server, task: task, port: port)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() async {
        task.cancel()
        _ = try? await task.value
    }
}

/// A memory backend whose namespace `slow` does not finish opening until ``open()`` is called
/// (it waits on the dispatch thread the server opens stores on, never on the cooperative pool).
enum OpeningGate {
    private static let gate = DispatchSemaphore(value: 0)

    static let backend = StorageBackend(name: "gated") { directory in
        if directory.hasSuffix("/slow") { gate.wait() }
        return try MemoryStore(directory: directory)
    }

    /// Lets the waiting open finish.
    static func open() { gate.signal() }
}

/// Where the built rtdb-server executable is (next to the test binary).
func rtdbServerBinary() throws -> URL { try builtExecutable(named: "rtdb-server") }

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes (TestSupport's `waitUntil`).
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    try await waitUntil(timeout: timeout, condition)
}
