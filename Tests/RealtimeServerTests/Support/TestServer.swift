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
///
/// Without a `directory` it stores in a new one in the temporary directory, which ``stop()``
/// removes (or the process's exit, when the test never stops it); a directory given to it belongs
/// to the caller, which removes it.
struct TestServer {
    let server: RealtimeServer
    let task: Task<Void, any Error>
    let port: Int
    /// The data directory when the test server made it (nil when the caller gave one).
    let ownDirectory: String?

    static let backends = StorageBackends([.memory, .sqlite, .lmdb, .leveldb, OpeningGate.backend])

    static func start(backend: String = "memory", directory: String? = nil, maxQueuedBytes: Int = 64 * 1024 * 1024,
                      maxQueuedBytesTotal: Int = 512 * 1024 * 1024, keepAlive: Duration = .seconds(30),
                      configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
        let madeDirectory = directory == nil
        let directory = directory ?? NSTemporaryDirectory() + "rtdb-test-\(UUID().uuidString)"
        let ownDirectory = madeDirectory ? directory : nil
        // Removed by stop(); at exit, also when the test failed before it stopped the server.
        if let ownDirectory { removeAtExit(ownDirectory) }
        var logger = Logger(label: "test-server")
        // Stopping by cancellation makes Hummingbird log its child channels' cancellation as errors.
        logger.logLevel = .critical
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory, backend: backend,
            maxQueuedBytesPerConnection: maxQueuedBytes, maxQueuedBytesTotal: maxQueuedBytesTotal, keepAliveInterval: keepAlive, logLevel: .critical)
        configure(&configuration)
        let server = RealtimeServer(configuration: configuration, backends: backends, logger: logger)
        let task = Task { try await server.run() }
        do {
            return TestServer(server: server, task: task, port: try await server.port(), ownDirectory: ownDirectory)
        } catch {
            // It never listened: stop it all the same, and remove what it made.
            await TestServer(server: server, task: task, port: 0, ownDirectory: ownDirectory).stop()
            throw error
        }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Stops the server; once it has closed its stores, removes the data directory it made.
    func stop() async {
        task.cancel()
        _ = try? await task.value
        if let ownDirectory { try? FileManager.default.removeItem(atPath: ownDirectory) }
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
