import Foundation
import TestSupport
import Testing

/// rtdb-server's options from a config file and `RTDB_*` environment variables, under the
/// command line, shown by `--print-config`; bad keys and values are named.
@Suite("Configuration sources")
struct ConfigurationFileTests {
    /// Runs rtdb-server to its end; returns its exit status and standard output.
    private func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32?, output: String) {
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RTDB_") }
        merged.merge(environment) { _, new in new }
        let child = try ChildProcess(executable: try rtdbServerBinary(), arguments: arguments, environment: merged)
        _ = try await eventually(timeout: .seconds(20)) { !child.process.isRunning }
        let status = await child.stop()
        return (status, child.output)
    }

    private func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "rtdb-config-\(UUID().uuidString).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("The command line wins over the environment, which wins over the file; every option is shown")
    func precedence() async throws {
        let config = try file(#"{"port": 9123, "max-connections": 50, "exactly-once": false, "idle-timeout": 7, "default-namespace": "fromfile"}"#)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let (status, output) = try await run(
            ["--config", config, "--print-config", "--idle-timeout", "3"],
            environment: ["RTDB_MAX_CONNECTIONS": "70", "RTDB_DEFAULT_NAMESPACE": "fromenv"])
        #expect(status == 0)
        let settings = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(settings["port"] as? Int == 9123, "from the file")
        #expect(settings["exactly-once"] as? Bool == false, "from the file")
        #expect(settings["max-connections"] as? Int == 70, "the environment over the file")
        #expect(settings["default-namespace"] as? String == "fromenv")
        #expect(settings["idle-timeout"] as? Double == 3, "the command line over the file")
        #expect(settings["backend"] as? String == "sqlite", "defaults are shown too")
        #expect(settings["config"] == nil && settings["print-config"] == nil)
    }

    @Test("An unknown key, a value of the wrong type and a bad environment value are errors that name them")
    func badInputIsNamed() async throws {
        let unknown = try file(#"{"max-conections": 5}"#)
        defer { try? FileManager.default.removeItem(atPath: unknown) }
        let wrongType = try file(#"{"port": "nine"}"#)
        defer { try? FileManager.default.removeItem(atPath: wrongType) }
        for (arguments, environment) in [
            (["--config", unknown], [String: String]()), (["--config", wrongType], [:]),
            (["--print-config"], ["RTDB_MAX_OPEN_NAMESPACES": "many"]), (["--config", "/nonexistent/rtdb.json"], [:]),
        ] {
            let (status, output) = try await run(arguments, environment: environment)
            #expect(status != 0, "\(arguments) \(environment)")
            #expect(!output.contains("listening on"), "it never starts")
        }
    }
}
