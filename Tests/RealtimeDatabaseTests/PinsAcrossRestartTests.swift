import CoreTree
import Foundation
import Persistence
import QueryEngine
@testable import RealtimeDatabase
import TestSupport
import Testing

/// Beyond Firebase: a `keepSynced(true)` pin outlives the process. A client process pins a
/// location and is killed with SIGKILL; the next client on the same directory listens there again
/// without app code, so the pinned data is current; `keepSynced(false)` ends the pin for good.
@Suite("pins survive a restart")
struct PinsAcrossRestartTests {
    @Test func aPinnedLocationIsSyncedAgainAfterTheProcessIsKilled() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("pins")
        let directory = Clients.temporaryDirectory("pins")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("scores", json: #"{"a":1}"#, namespace: namespace)

        let probe = try ChildProcess(
            executable: try builtExecutable(named: "rtdb-client-probe"),
            arguments: ["pin", "--url", server.databaseURL(namespace: namespace), "--backend", "sqlite",
                        "--directory", directory, "--path", "scores"])
        try await probe.waitForOutput("pinned", timeout: .seconds(30))
        await probe.stop(signal: SIGKILL)
        try await server.write("scores/b", json: "2", namespace: namespace)

        // The app code of the next run never mentions `scores`.
        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        _ = database.reference()
        let repo = database.repo
        func cached() -> String { repo.perform { repo.syncTree.calcCompleteEventCache(path: "scores").jsonString(format: .plain) } }
        #expect(try await waitUntil { cached() == #"{"a":1,"b":2}"# }, "the pin was not listened to again: \(cached())")
        try await server.write("scores/c", json: "3", namespace: namespace)
        #expect(try await waitUntil { cached() == #"{"a":1,"b":2,"c":3}"# }, "the restored pin does not keep the data current: \(cached())")

        // Unpinning ends it: the next run does not listen there.
        database.reference(withPath: "scores").keepSynced(false)
        _ = try await database.reference(withPath: "probe").singleEvent(of: .value)
        database.shutdown()
        let reopened = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        _ = reopened.reference()
        let reopenedRepo = reopened.repo
        #expect(reopenedRepo.perform { reopenedRepo.keptSynced.isEmpty })
        try await server.write("scores/d", json: "4", namespace: namespace)
        // Ordered replies: once these listens are answered (the first waits for the connection),
        // a push caused by the write would have come.
        _ = try await reopened.reference(withPath: "probe").singleEvent(of: .value)
        _ = try await reopened.reference(withPath: "probe").singleEvent(of: .value)
        reopened.goOffline()
        let offline = try await reopened.reference(withPath: "scores").getData()
        reopened.shutdown()
        #expect(offline.json == #"{"a":1,"b":2,"c":3}"#, "an unpinned location was still synced: \(offline.json)")
    }
}
