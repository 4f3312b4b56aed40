import Foundation
@_spi(Testing) @testable import RealtimeDatabase
import TestSupport
import Testing

/// Beyond Firebase: `getData(source:)` reads from the server only (failing rather than answering
/// from the cache) or from the cache only (at once, never asking the server), against a real
/// server, online and offline, async and with a completion block.
@Suite("getData(source:)")
struct GetDataSourceTests {
    /// A client with persistence on in `directory` whose cache holds `doc` = "cached" (read once,
    /// then no longer listened to) while the server holds "fresh" there.
    private func clientWithStaleCache(_ server: ServerProcess, namespace: String, directory: String) async throws -> Database {
        try await server.write("doc", json: #""cached""#, namespace: namespace)
        let database = try Clients.make(server, namespace: namespace, backend: "sqlite", directory: directory)
        _ = try await database.reference(withPath: "doc").singleEvent(of: .value)
        // Replies come in order: once this read is answered, the listen above has ended.
        _ = try await database.reference(withPath: "barrier").getData()
        try await server.write("doc", json: #""fresh""#, namespace: namespace)
        return database
    }

    @Test func onlineTheServerSourceAsksTheServerAndTheCacheSourceNeverDoes() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("source-online")
        let directory = Clients.temporaryDirectory("source-online")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try await clientWithStaleCache(server, namespace: namespace, directory: directory)
        defer { database.shutdown() }
        let doc = database.reference(withPath: "doc")

        #expect(try await doc.getData(source: .cache).value as? String == "cached", "the cache answers, stale as it is")
        #expect(try await doc.getData(source: .server).value as? String == "fresh")
        #expect(try await doc.getData(source: .default).value as? String == "fresh")
        #expect(try await doc.getData().value as? String == "fresh")

        // Nothing cached: the cache source fails at once although the server has the data.
        try await server.write("elsewhere", json: "1", namespace: namespace)
        let error = await #expect(throws: DatabaseError.self) { try await database.reference(withPath: "elsewhere").getData(source: .cache) }
        #expect(error?.code == .notCached, "\(String(describing: error))")
        #expect(error?.message.contains("/elsewhere") == true)
        #expect(try await database.reference(withPath: "elsewhere").getData(source: .server).value as? Int == 1)

        // A query, from the server.
        try await server.write("scores", json: #"{"a":1,"b":5,"c":9}"#, namespace: namespace)
        let top = try await database.reference(withPath: "scores").queryOrderedByValue().queryLimited(toLast: 2).getData(source: .server)
        #expect(top.json == #"{"b":5,"c":9}"#)
    }

    @Test func offlineTheServerSourceFailsWhereTheDefaultAnswersFromTheCache() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("source-offline")
        let directory = Clients.temporaryDirectory("source-offline")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try await clientWithStaleCache(server, namespace: namespace, directory: directory)
        defer { database.shutdown() }
        let doc = database.reference(withPath: "doc")
        database.goOffline()

        let error = await #expect(throws: DatabaseError.self) { try await doc.getData(source: .server) }
        #expect(error?.code == .offline, "\(String(describing: error))")
        #expect(error?.message.contains("does not answer from the cache") == true, "\(String(describing: error))")
        #expect(try await doc.getData(source: .default).value as? String == "cached")
        #expect(try await doc.getData(source: .cache).value as? String == "cached")

        // The cache source sees local writes, as listeners do.
        doc.write("local")
        #expect(try await doc.getData(source: .cache).value as? String == "local")
        let nothing = await #expect(throws: DatabaseError.self) { try await database.reference(withPath: "never").getData(source: .cache) }
        #expect(nothing?.code == .notCached)

        // The completion block forms, on the callback queue.
        let answers = Recorder()
        doc.getData(source: .cache) { error, snapshot in answers.record("cache \(snapshot?.value ?? "nil") \(error == nil)") }
        doc.getData(source: .server) { error, snapshot in
            answers.record("server \(snapshot?.value ?? "nil") \((error as? DatabaseError)?.code.rawValue ?? "none")")
        }
        database.reference(withPath: "never").getData(source: .cache) { error, snapshot in
            answers.record("never \(snapshot?.value ?? "nil") \((error as? DatabaseError)?.code.rawValue ?? "none")")
        }
        #expect(try await answers.waitFor(count: 3))
        #expect(Set(answers.all) == ["cache local true", "server nil offline", "never nil not_cached"], "\(answers.all)")

        // Back online, the server source answers again (with the local write, now acknowledged).
        database.goOnline()
        try await database.waitForPendingWrites()
        #expect(try await doc.getData(source: .server).value as? String == "local")
    }

    @Test func withTheServerDownTheServerSourceFailsAfterTheConnectTimeout() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("source-down")
        let directory = Clients.temporaryDirectory("source-down")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try await clientWithStaleCache(server, namespace: namespace, directory: directory)
        defer { database.shutdown() }
        let connected = Recorder()
        database.reference(withPath: ".info/connected").observe(.value) { connected.record("\($0.value as? Bool ?? false)") }
        await server.stop()
        #expect(try await waitUntil { connected.all.last == "false" })

        let error = await #expect(throws: DatabaseError.self) { try await database.reference(withPath: "doc").getData(source: .server) }
        #expect(error?.code == .offline, "\(String(describing: error))")
        #expect(try await database.reference(withPath: "doc").getData().value as? String == "cached")
    }

    @Test func infoLocationsAnswerFromLocalStateWhateverTheSource() async throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=info-source")
        database.goOffline()
        defer { database.shutdown() }
        for source in [DatabaseSource.default, .server, .cache] {
            #expect(try await database.reference(withPath: ".info/connected").getData(source: source).value as? Bool == false)
        }
    }
}
