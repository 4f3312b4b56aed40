import Foundation
import Logging
import RealtimeServer
import ServerCore
import Testing

/// The data directory is checked before the server says it listens: unusable directories and a
/// directory another server holds stop the start with a clear error.
@Suite("Startup checks")
struct StartupCheckTests {
    private static func start(directory: String, host: String = "127.0.0.1", rules: String? = nil) -> (RealtimeServer, Task<Void, any Error>) {
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(host: host, port: 0, dataDirectory: directory, backend: "sqlite", rulesJSON: rules, logLevel: .critical)
        let server = RealtimeServer(configuration: configuration, backends: TestServer.backends, logger: logger)
        return (server, Task { try await server.run() })
    }

    @Test("A second server on a data directory in use never listens, and says why")
    func directoryInUse() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-inuse-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try await TestServer.start(backend: "sqlite", directory: directory)
        let (second, task) = Self.start(directory: directory)
        await #expect(throws: (any Error).self) { _ = try await second.port() }
        let error = await task.result
        #expect("\(error)".contains("another rtdb-server is using the data directory"), "\(error)")
        #expect(try await http("PUT", "\(first.baseURL)/a.json?ns=test", body: "1").status == 200, "the first server goes on")
        await first.stop()
        // Once the first has stopped, the directory is free again.
        let third = try await TestServer.start(backend: "sqlite", directory: directory)
        #expect(try await http("GET", "\(third.baseURL)/a.json?ns=test").body == "1")
        await third.stop()
    }

    @Test("A data directory that cannot be created or written stops the start with the reason")
    func unusableDirectory() async throws {
        let file = NSTemporaryDirectory() + "rtdb-notadir-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let (server, task) = Self.start(directory: file + "/data")
        await #expect(throws: (any Error).self) { _ = try await server.port() }
        let error = await task.result
        #expect("\(error)".contains("cannot create the data directory"), "\(error)")
    }

    @Test("Without rules the server listens only on loopback; a rules file that does not compile stops the start, located")
    func rulesAtStartup() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-rules-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (open, openTask) = Self.start(directory: directory, host: "0.0.0.0")
        await #expect(throws: (any Error).self) { _ = try await open.port() }
        #expect("\(await openTask.result)".contains("without security rules"))
        let (bad, badTask) = Self.start(directory: directory, rules: "{\"rules\": {\".read\": \"nope\"}}")
        await #expect(throws: (any Error).self) { _ = try await bad.port() }
        #expect("\(await badTask.result)".contains("line 1, column"))
        let (good, goodTask) = Self.start(directory: directory, host: "0.0.0.0", rules: #"{"rules": {".read": true}}"#)
        let port = try await good.port()
        #expect(try await http("GET", "http://127.0.0.1:\(port)/x.json?ns=test").status == 200)
        #expect(try await http("PUT", "http://127.0.0.1:\(port)/x.json?ns=test", body: "1").status == 401, "the rules file applies")
        goodTask.cancel()
        _ = await goodTask.result
    }

    @Test("A TLS certificate or key that cannot be used stops the start, naming the file")
    func unusableTLSFiles() async throws {
        let directory = NSTemporaryDirectory() + "rtdb-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = directory + "/garbage.pem"
        try "not a certificate".write(toFile: garbage, atomically: true, encoding: .utf8)
        for files in [TLSFiles(certificateChainPath: garbage, privateKeyPath: garbage),
                      TLSFiles(certificateChainPath: directory + "/missing.pem", privateKeyPath: garbage)] {
            var logger = Logger(label: "test-server")
            logger.logLevel = .critical
            var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, dataDirectory: directory + "/data", backend: "memory", logLevel: .critical)
            configuration.tls = files
            let server = RealtimeServer(configuration: configuration, backends: TestServer.backends, logger: logger)
            let task = Task { try await server.run() }
            await #expect(throws: (any Error).self) { _ = try await server.port() }
            let error = await task.result
            #expect("\(error)".contains(files.certificateChainPath), "\(error)")
        }
    }
}
