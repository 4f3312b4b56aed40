import Foundation
import TestSupport
import Testing

/// Beyond Firebase: a queued write is applied once even when the client process dies between the
/// server's commit and the removal of the write from its disk queue. Each run of
/// `rtdb-client-probe increment` queues `counter += 1` and kills itself with SIGKILL the moment
/// the server's acknowledgement arrives; the next run finds the write still queued and sends it
/// again.
@Suite("exactly-once queued writes")
struct ExactlyOnceWritesTests {
    private static let runs = 8

    /// Makes `runs` killed increments on one persistence directory, then drains the queue;
    /// returns the counter and the markers the server holds.
    private static func killedIncrements(_ server: ServerProcess, namespace: String) async throws -> (counter: Int?, markers: Int) {
        let directory = Clients.temporaryDirectory("once")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let url = server.databaseURL(namespace: namespace)
        let probe = try builtExecutable(named: "rtdb-client-probe")
        let common = ["increment", "--url", url, "--backend", "sqlite", "--directory", directory]
        for run in 1...runs {
            let child = try ChildProcess(executable: probe, arguments: common + ["--run", "\(run)", "--kill-at-ack"])
            try await child.waitForOutput("killing at ack", timeout: .seconds(30))
            let status = await child.stop(signal: SIGKILL)
            #expect(!child.output.contains("drained"), "run \(run) finished instead of being killed (status \(String(describing: status)))")
        }
        let drain = try ChildProcess(executable: probe, arguments: common)
        try await drain.waitForOutput("drained", timeout: .seconds(30))
        await drain.stop()
        let counter = try await server.read("counter", namespace: namespace) as? Int
        let markers = (try await server.read("runs", namespace: namespace) as? [String: Any])?.count ?? 0
        return (counter, markers)
    }

    @Test func anIncrementCommittedJustBeforeTheClientIsKilledCountsOnce() async throws {
        let server = try await ServerProcess.launch(backend: "sqlite")
        defer { Task { await server.shutDown() } }
        let (counter, markers) = try await Self.killedIncrements(server, namespace: Clients.namespace("once"))
        #expect(markers == Self.runs)
        #expect(counter == Self.runs, "\(Self.runs) increments were made; the counter says \(String(describing: counter))")
    }

    /// Against a server without the extension the client sends plain Firebase writes and works
    /// as before, and the write the kill left queued is applied again: what Firebase does.
    @Test func againstAServerWithoutTheExtensionWritesAreSentAsFirebaseDoes() async throws {
        let server = try await ServerProcess.launch(backend: "sqlite", arguments: ["--disable-exactly-once"])
        defer { Task { await server.shutDown() } }
        let (counter, markers) = try await Self.killedIncrements(server, namespace: Clients.namespace("plain"))
        #expect(markers == Self.runs)
        #expect((counter ?? 0) >= 2 * Self.runs, "each killed run's write is sent again by the next: \(String(describing: counter))")
    }
}
