import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// The page's "Querying data offline" walk-through, step by step, against a real server that is
/// stopped for the offline part.
@Suite("Offline queries")
struct OfflineQueryTests {
    static let scores = #"{"bruhathkayosaurus":55,"lambeosaurus":21,"linhenykus":80,"pterodactyl":93,"stegosaurus":5,"triceratops":22}"#

    @Test("The page's example", arguments: ["sqlite", "lmdb", "leveldb"])
    func pageExample(backend: String) async throws {
        let server = try await ServerProcess.launch(backend: "sqlite")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("dinos")
        let directory = Clients.temporaryDirectory("dinos-\(backend)")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("scores", json: OfflineQueryTests.scores, namespace: namespace)

        // Online: the last four scores.
        let online = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        let lastFour = Recorder()
        let onlineRef = online.reference(withPath: "scores")
        onlineRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.childAdded) { lastFour.record($0.key) }
        onlineRef.queryOrderedByValue().queryLimited(toLast: 4).observe(.value) { _ in lastFour.record("value") }
        #expect(try await lastFour.waitFor("value"))
        #expect(Set(lastFour.all.filter { $0 != "value" }) == ["pterodactyl", "linhenykus", "bruhathkayosaurus", "triceratops"])
        online.shutdown()

        // The app restarts offline.
        await server.stop()
        let offline = try Clients.make(server, namespace: namespace, backend: backend, directory: directory)
        defer { offline.shutdown() }
        let scoresRef = offline.reference(withPath: "scores")
        let lastTwo = Recorder()
        scoresRef.queryOrderedByValue().queryLimited(toLast: 2).observe(.childAdded) { lastTwo.record($0.key) }
        scoresRef.queryOrderedByValue().queryLimited(toLast: 2).observe(.value) { _ in lastTwo.record("value") }
        #expect(try await lastTwo.waitFor(count: 2))
        await offline.settle()  // Every event the cache raises for these listeners has been delivered.
        #expect(lastTwo.all == ["linhenykus", "pterodactyl"], "two child_added from the cache and no value")

        let lastSix = Recorder()
        scoresRef.queryOrderedByValue().queryLimited(toLast: 6).observe(.childAdded) { lastSix.record($0.key) }
        scoresRef.queryOrderedByValue().queryLimited(toLast: 6).observe(.value) { _ in lastSix.record("value") }
        #expect(try await lastSix.waitFor(count: 4))
        await offline.settle()
        #expect(lastSix.all == ["triceratops", "bruhathkayosaurus", "linhenykus", "pterodactyl"], "the four cached children at once, no value")

        // Back online: the two missing children, then value.
        try await server.restart()
        #expect(try await lastSix.waitFor("value", timeout: .seconds(20)))
        #expect(Array(lastSix.all.dropFirst(4)) == ["stegosaurus", "lambeosaurus", "value"])
        #expect(try await lastTwo.waitFor("value"))
    }
}
