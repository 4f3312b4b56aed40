import Foundation
@testable import RealtimeDatabase
import Synchronization
import TestSupport
import Testing

/// Beyond Firebase: `DataSnapshot.metadata` says whether a snapshot includes unacknowledged
/// writes and whether it comes from the cache; observers that ask (`includeMetadataChanges`) also
/// hear when only that changes, and the others hear exactly what Firebase raises.
@Suite("snapshot metadata")
struct SnapshotMetadataTests {
    /// Events as `value pending cache`.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func record(_ snapshot: DataSnapshot) {
            let line = "\(snapshot.json) \(snapshot.metadata.hasPendingWrites ? "pending" : "acked") \(snapshot.metadata.isFromCache ? "cache" : "server")"
            entries.withLock { $0.append(line) }
        }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func aLocalWriteIsPendingUntilAcknowledgedAndOnlyMetadataObserversHearTheAck() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("metadata")
        try await server.write("m", json: "1", namespace: namespace)
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let ref = database.reference(withPath: "m")
        let withMetadata = Log(), plain = Log()
        ref.observe(.value, includeMetadataChanges: true, with: withMetadata.record)
        ref.observe(.value, with: plain.record)
        #expect(try await waitUntil { withMetadata.all == ["1 acked server"] }, "\(withMetadata.all)")

        try await ref.setValue(2)
        #expect(try await waitUntil { withMetadata.all.count == 3 }, "\(withMetadata.all)")
        #expect(withMetadata.all == ["1 acked server", "2 pending server", "2 acked server"])
        // A barrier: an answered read after the ack; the plain observer heard no metadata-only event.
        _ = try await database.reference(withPath: "barrier").singleEvent(of: .value)
        #expect(plain.all == ["1 acked server", "2 pending server"])
    }

    @Test func cachedDataIsFromTheCacheUntilTheServerConfirmsIt() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("metadata-cache")
        let directory = Clients.temporaryDirectory("metadata-cache")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await server.write("c", json: #"{"x":1}"#, namespace: namespace)
        do {
            let first = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
            let log = Log()
            first.reference(withPath: "c").observe(.value, with: log.record)
            #expect(try await waitUntil { log.all == [#"{"x":1} acked server"#] }, "\(log.all)")
            // Replies come in order: once this read is answered, the listen at c is complete and cached.
            _ = try await first.reference(withPath: "barrier").singleEvent(of: .value)
            first.shutdown()
        }
        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        defer { database.shutdown() }
        database.goOffline()
        let log = Log()
        database.reference(withPath: "c").observe(.value, includeMetadataChanges: true, with: log.record)
        #expect(try await waitUntil { log.all == [#"{"x":1} acked cache"#] }, "\(log.all)")
        database.reference(withPath: "c/y").setValue(2, withCompletionBlock: { _, _ in })
        #expect(try await waitUntil { log.all.count == 2 }, "\(log.all)")
        #expect(log.all.last == #"{"x":1,"y":2} pending cache"#)
        database.goOnline()
        #expect(try await waitUntil { log.all.last == #"{"x":1,"y":2} acked server"# }, "\(log.all)")
        #expect(!log.all.contains(#"{"x":1} acked server"#), "the local write was never hidden: \(log.all)")
    }
}
