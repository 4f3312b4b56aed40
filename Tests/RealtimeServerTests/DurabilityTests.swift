import Foundation
import Testing

/// A real rtdb-server process, killed with SIGKILL while clients write: every write it
/// acknowledged is there after a restart, on every disk backend.
@Suite("Durability across SIGKILL", .serialized)
struct DurabilityTests {
    /// Starts the built rtdb-server and returns it with its port.
    private func launch(backend: String, directory: String) async throws -> (Process, Int) {
        let process = Process()
        process.executableURL = try rtdbServerBinary()
        process.arguments = ["--host", "127.0.0.1", "--port", "0", "--backend", backend, "--data-dir", directory, "--log-level", "error"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = Collected()
        output.fileHandleForReading.readabilityHandler = { handle in lines.append(handle.availableData) }
        var port: Int?
        _ = try await eventually(timeout: .seconds(20)) {
            if let range = lines.text.range(of: "listening on http://127.0.0.1:") {
                port = Int(lines.text[range.upperBound...].prefix { $0.isNumber })
            }
            return port != nil
        }
        output.fileHandleForReading.readabilityHandler = nil
        guard let port else {
            process.terminate()
            throw TestFailure("rtdb-server did not start: \(lines.text)")
        }
        return (process, port)
    }

    @Test("Acknowledged writes survive a kill -9", arguments: ["sqlite", "lmdb", "leveldb"])
    func killDuringWrites(backend: String) async throws {
        let directory = NSTemporaryDirectory() + "rtdb-kill-\(backend)-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (server, port) = try await launch(backend: backend, directory: directory)
        let acknowledged = AckedSet()
        // Eight writers keep writing; the kill lands while writes are in flight.
        let writers = Task {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for index in 0..<10_000 {
                            let key = "w\(writer)-\(index)"
                            guard let reply = try? await http("PUT", "http://127.0.0.1:\(port)/kill/\(key).json?ns=durable", body: "\(index)"),
                                  reply.status == 200 else { return }
                            await acknowledged.insert(key)
                        }
                    }
                }
            }
        }
        _ = try await eventually(timeout: .seconds(20)) { await acknowledged.count >= 200 }
        kill(server.processIdentifier, SIGKILL)
        await waitForExit(server)
        await writers.value
        let acked = await acknowledged.keys
        #expect(acked.count >= 200)

        let (restarted, newPort) = try await launch(backend: backend, directory: directory)
        let stored = try await http("GET", "http://127.0.0.1:\(newPort)/kill.json?ns=durable").json as? [String: Any] ?? [:]
        restarted.terminate()
        await waitForExit(restarted)
        let missing = acked.filter { stored[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) acknowledged writes lost on \(backend), e.g. \(missing.prefix(3))")
        for key in acked.prefix(50) {
            #expect(stored[key] as? Int == Int(key.split(separator: "-").last!)!)
        }
    }
}

/// Waits for a process to end without blocking a thread of the cooperative pool (a blocking wait
/// can starve the pool when many tests run at once on two cores).
func waitForExit(_ process: Process) async {
    while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
}

actor AckedSet {
    private(set) var keys: Set<String> = []
    func insert(_ key: String) { keys.insert(key) }
    var count: Int { keys.count }
}
