import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import RealtimeServer

/// An in-process server on a free loopback port, over the memory store unless told otherwise.
struct TestServer {
    let server: RealtimeServer
    let task: Task<Void, any Error>
    let port: Int

    static let backends = StorageBackends([.memory, .sqlite, .lmdb, .leveldb])

    static func start(backend: String = "memory", directory: String? = nil, maxQueuedBytes: Int = 64 * 1024 * 1024,
                      keepAlive: Duration = .seconds(30)) async throws -> TestServer {
        let directory = directory ?? NSTemporaryDirectory() + "rtdb-test-\(UUID().uuidString)"
        var logger = Logger(label: "test-server")
        // Stopping by cancellation makes Hummingbird log its child channels' cancellation as errors.
        logger.logLevel = .critical
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: directory, backend: backend,
            maxQueuedBytesPerConnection: maxQueuedBytes, keepAliveInterval: keepAlive, logLevel: .critical)
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

/// Where the built rtdb-server executable is (next to the test binary).
func rtdbServerBinary() throws -> URL {
    let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("rtdb-server")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw TestFailure("rtdb-server is not built next to \(testBinary.path); run `swift build --build-tests` first")
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
