import Foundation
@testable import RealtimeDatabase
import TestSupport
import Testing

/// Runs the page's snippets (Snippets/OfflinePageSnippets.swift) on the default database,
/// configured for a real server, and checks what they did there.
@Suite("The offline page's snippets", .serialized)
struct OfflinePageSnippetTests {
    @Test func theSnippetsDoWhatThePageSays() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("page")
        Database.configure(url: server.databaseURL(namespace: namespace))
        let database = Database.database()
        database.persistenceDirectory = Clients.temporaryDirectory("page")
        defer { try? FileManager.default.removeItem(atPath: database.persistenceDirectory) }
        try await server.write("scores", json: OfflineQueryTests.scores, namespace: namespace)

        OfflinePageSnippets.enablePersistence()
        #expect(database.isPersistenceEnabled)
        OfflinePageSnippets.keepScoresSynced()
        OfflinePageSnippets.lastFourScores()
        OfflinePageSnippets.lastTwoScores(database.reference(withPath: "scores"))
        OfflinePageSnippets.stopKeepingScoresSynced(database.reference(withPath: "scores"))
        OfflinePageSnippets.observeConnectionState()
        OfflinePageSnippets.serverTimeOffset()

        // onDisconnect registrations: set, then replaced by a removal, then set-and-cancel.
        let presenceRef = OfflinePageSnippets.disconnectMessage()
        OfflinePageSnippets.disconnectRemoveWithCompletion(presenceRef)
        OfflinePageSnippets.lastOnlineTimestamp()
        OfflinePageSnippets.presenceApp()

        // The presence app marks this connection while connected.
        let connections = try await waitUntil(timeout: .seconds(60)) {
            (try await server.read("users/morgan/connections", namespace: namespace) as? [String: Any])?.values
                .contains { $0 as? Bool == true } ?? false
        }
        #expect(connections, "the presence app did not add this device")
        let cancelRef = database.reference(withPath: "cancelled")
        OfflinePageSnippets.disconnectThenCancel(cancelRef)
        try await server.write("disconnectmessage", json: "\"still here\"", namespace: namespace)
        // Let every registration reach the server before the connection drops.
        _ = try await database.reference(withPath: "sync").setValue(true)

        let before = Date().timeIntervalSince1970 * 1000
        database.goOffline()
        // The server ran the onDisconnect writes: the removal replaced the message, the
        // connection entry is gone, the last-online time is the server's, the cancelled one never ran.
        // A bound for a failure only (the server's onDisconnect runs as it sees the socket close);
        // 10 s ran out once in CI under the socket suites' load.
        #expect(try await waitUntil(timeout: .seconds(60)) {
            try await server.read("users/morgan/lastOnline", namespace: namespace) is Double
        })
        let after = Date().timeIntervalSince1970 * 1000
        let lastOnline = try await server.read("users/morgan/lastOnline", namespace: namespace) as? Double ?? 0
        // The server's time as it ran the onDisconnect: between going offline and seeing it ran.
        #expect(lastOnline >= before - 1_000 && lastOnline <= after + 1_000, "\(lastOnline) not in [\(before), \(after)]")
        #expect(try await server.read("disconnectmessage", namespace: namespace) == nil)
        #expect(try await server.read("users/morgan/connections", namespace: namespace) == nil)
        #expect(try await server.read("cancelled", namespace: namespace) == nil)
        database.shutdown()
    }
}
