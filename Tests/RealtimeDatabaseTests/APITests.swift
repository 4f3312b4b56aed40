import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
@testable import RealtimeDatabase
import TestSupport
import Testing

/// The API surface without a server: validation at the call, snapshots in Foundation form,
/// Codable, URLs, async sequences. An offline client answers everything locally.
@Suite("API")
struct APITests {
    private func offlineClient() throws -> Database {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=api")
        database.goOffline()
        return database
    }

    @Test func invalidValuesAndPathsFailAtTheCallAndWriteNothing() async throws {
        let database = try offlineClient()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "things")
        ref.write(["ok": 1])
        await #expect(throws: DatabaseError.self) { try await ref.setValue(["bad.key": 1]) }
        await #expect(throws: DatabaseError.self) { try await ref.setValue(Double.nan) }
        await #expect(throws: DatabaseError.self) { try await ref.setValue(Date()) }
        await #expect(throws: DatabaseError.self) { try await ref.updateChildValues(["a/b": 1, "a": 2]) }
        await #expect(throws: DatabaseError.self) { try await ref.updateChildValues(["x$y": 1]) }
        await #expect(throws: DatabaseError.self) { try await database.reference(withPath: ".info/connected").setValue(true) }
        let deep = (0..<40).map { "k\($0)" }.joined(separator: "/")
        await #expect(throws: DatabaseError.self) { try await ref.updateChildValues([deep: 1]) }
        do {
            try await ref.setValue(["a": ["b#": true]])
            Issue.record("an invalid nested key was accepted")
        } catch let error as DatabaseError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("b#"), "the message names the key: \(error.message)")
        }
        let reported = Recorder()
        ref.setValue(["no/slash": 1]) { error, _ in reported.record((error as? DatabaseError)?.code.rawValue ?? "none") }
        #expect(try await reported.waitFor(count: 1))
        #expect(reported.all == [DatabaseError.Code.invalidArgument.rawValue])
        let snapshot = try await ref.singleEvent(of: .value)
        #expect(snapshot.json == #"{"ok":1}"#, "nothing invalid was written")
        #expect(throws: DatabaseError.self) { try DatabaseReference.validatePath("a/b[0]") }
    }

    @Test func snapshotsHandOutFoundationValues() async throws {
        let database = try offlineClient()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "profile")
        ref.write(["name": "Ada", "age": 36, "score": 9.5, "admin": true, "tags": ["x", "y"], "nested": ["deep": ["er": 1]]])
        ref.child("name").writePriority(2)
        let snapshot = try await ref.singleEvent(of: .value)
        #expect(snapshot.exists())
        #expect(snapshot.key == "profile")
        #expect(snapshot.childrenCount == 6)
        #expect(snapshot.hasChild("nested/deep/er"))
        #expect(!snapshot.hasChild("missing"))
        #expect(snapshot.childSnapshot(forPath: "admin").value as? Bool == true)
        #expect(snapshot.childSnapshot(forPath: "age").value as? Int == 36)
        #expect(snapshot.childSnapshot(forPath: "score").value as? TimeInterval == 9.5)
        #expect(snapshot.childSnapshot(forPath: "tags").value as? [Any] != nil)
        #expect(snapshot.childSnapshot(forPath: "name").priority as? Int == 2)
        #expect((snapshot.value as? [String: Any])?["name"] as? String == "Ada")
        let exported = snapshot.childSnapshot(forPath: "name").valueInExportFormat() as? [String: Any]
        #expect(exported?[".priority"] as? Int == 2)
        #expect(exported?[".value"] as? String == "Ada")
        let keys = snapshot.children.allObjects.compactMap { ($0 as? DataSnapshot)?.key }
        #expect(keys == ["admin", "age", "nested", "score", "tags", "name"], "priority order: no priority first, then by key")
        let missing = snapshot.childSnapshot(forPath: "missing")
        #expect(!missing.exists())
        #expect("\(missing.value ?? "null")" != "")
        #expect(missing.ref.url.hasSuffix("/profile/missing?ns=api"))
    }

    @Test func codableValuesRoundTrip() async throws {
        struct Dino: Codable, Equatable {
            var name: String
            var height: Double
            var tags: [String]
        }
        let database = try offlineClient()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "dinos/t-rex")
        let dino = Dino(name: "T. rex", height: 4.0, tags: ["big", "old"])
        try ref.writeEncoded(dino)
        let snapshot = try await ref.singleEvent(of: .value)
        #expect(try snapshot.data(as: Dino.self) == dino)
        #expect(throws: DecodingError.self) { try snapshot.childSnapshot(forPath: "name").data(as: Dino.self) }
    }

    @Test func anEncodingFailureKeepsItsCause() async throws {
        struct Refuses: Encodable {
            struct Why: Error, Equatable {}
            func encode(to encoder: any Encoder) throws { throw Why() }
        }
        let database = try offlineClient()
        defer { database.shutdown() }
        do {
            try database.reference(withPath: "x").setValue(from: Refuses())
            Issue.record("the write was accepted")
        } catch let error as DatabaseError {
            #expect(error.code == .invalidArgument)
            #expect(error.underlyingError is Refuses.Why)
            let bridged = error as NSError
            #expect(bridged.domain == "com.firebase.database")
            #expect(bridged.localizedDescription == error.message)
            #expect(bridged.userInfo[NSUnderlyingErrorKey] != nil, "the cause travels with the NSError")
        }
    }

    @Test func eventsArriveAsAnAsyncSequence() async throws {
        let database = try offlineClient()
        defer { database.shutdown() }
        let list = database.reference(withPath: "list")
        list.write(["a": 1])
        var received: [String] = []
        for try await event in list.queryOrderedByKey().events(of: [.childAdded]) {
            received.append("\(event.type) \(event.snapshot.key) after \(event.previousSiblingKey ?? "-")")
            if received.count == 1 { list.child("b").write(2) }
            if received.count == 2 { break }
        }
        #expect(received == ["childAdded a after -", "childAdded b after a"])
        var values: [String] = []
        for try await snapshot in list.child("a").values {
            values.append("\(snapshot.value ?? "nil")")
            if values.count == 1 { list.child("a").write(5) } else { break }
        }
        #expect(values == ["1", "5"])
    }

    @Test func urlsAndReferences() throws {
        let database = try Clients.make(url: "https://my-app.firebaseio.com")
        #expect(database.reference(withPath: "a/b").url == "https://my-app.firebaseio.com/a/b")
        let ref = database.reference().child("users").child("ada/posts")
        #expect(ref.key == "posts")
        #expect(ref.parent?.key == "ada")
        #expect(ref.root.key == nil)
        #expect(database.reference(fromURL: "https://my-app.firebaseio.com/x/y").key == "y")
        let local = try Clients.make(url: "http://localhost:9000?ns=demo")
        #expect(local.reference(withPath: "a").url == "http://localhost:9000/a?ns=demo")
        #expect(throws: DatabaseError.self) { try Database(url: "ftp://example.com") }
        #expect(throws: DatabaseError.self) { try Database(url: "not a url") }
    }

    @Test func childByAutoIdMakesOrderedUniqueKeys() throws {
        let database = try offlineClient()
        defer { database.shutdown() }
        let list = database.reference(withPath: "pushed")
        let keys = (0..<200).map { _ in list.childByAutoId().key! }
        #expect(Set(keys).count == 200)
        #expect(keys == keys.sorted())
        #expect(keys.allSatisfy { $0.count == 20 })
    }

    @Test func serverTimestampsAreEstimatedLocally() async throws {
        let database = try offlineClient()
        defer { database.shutdown() }
        let ref = database.reference(withPath: "stamped")
        let before = Date().timeIntervalSince1970 * 1000
        ref.write(["at": ServerValue.timestamp(), "n": ServerValue.increment(5)])
        let snapshot = try await ref.singleEvent(of: .value)
        let stamp = snapshot.childSnapshot(forPath: "at").value as? Double ?? 0
        #expect(stamp >= before - 1 && stamp <= Date().timeIntervalSince1970 * 1000 + 1)
        #expect(snapshot.childSnapshot(forPath: "n").value as? Int == 5)
    }
}

/// API shapes Firebase's Swift interface has: equality of references and queries, the class-wide
/// connection switches, methods where Swift imports Objective-C methods.
@Suite("Firebase API shapes")
struct FirebaseAPIShapeTests {
    @Test func referencesAndQueriesAreEquatableAndHashable() throws {
        let database = try Clients.make(url: "http://127.0.0.1:9?ns=shapes")
        defer { database.shutdown() }
        let a = database.reference(withPath: "a/b")
        #expect(a == database.reference().child("a").child("b"))
        #expect(a != database.reference(withPath: "a/c"))
        #expect(Set([a, database.reference(withPath: "a/b"), database.reference(withPath: "x")]).count == 2)
        let top = a.queryOrdered(byChild: "score").queryLimited(toLast: 3)
        #expect(top == a.queryOrdered(byChild: "score").queryLimited(toLast: 3))
        #expect(top != a.queryOrdered(byChild: "score").queryLimited(toFirst: 3))
        #expect(a.queryOrderedByKey() != a, "a query is not its reference")
        let other = try Clients.make(url: "http://127.0.0.1:9?ns=shapes-other")
        defer { other.shutdown() }
        #expect(other.reference(withPath: "a/b") != a, "another database instance")
        #expect(a.description() == "http://127.0.0.1:9/a/b?ns=shapes")
    }

    @Test func loggingSwitchesTheClientLoggerAndTheVersionIsKnown() {
        Database.setLoggingEnabled(true)
        #expect(ClientLog.logger.logLevel == .debug)
        Database.setLoggingEnabled(false)
        #expect(ClientLog.logger.logLevel == .info)
        #expect(Database.sdkVersion() == Database.version && !Database.sdkVersion().isEmpty)
    }
}

/// `FirebaseApp` and `FirebaseOptions`: configuring an app, reading a `GoogleService-Info.plist`,
/// and the app's database.
@Suite("FirebaseApp")
struct FirebaseAppTests {
    @Test func anAppFromAPlistGivesItsDatabase() throws {
        let plist: [String: Any] = [
            "DATABASE_URL": "http://127.0.0.1:9?ns=from-plist", "GOOGLE_APP_ID": "1:2:ios:3", "GCM_SENDER_ID": "2",
            "API_KEY": "key", "PROJECT_ID": "demo", "IS_ANALYTICS_ENABLED": false,
        ]
        let path = NSTemporaryDirectory() + "GoogleService-Info-\(UUID().uuidString).plist"
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = try #require(FirebaseOptions(contentsOfFile: path))
        #expect(options.databaseURL == "http://127.0.0.1:9?ns=from-plist")
        #expect(options.googleAppID == "1:2:ios:3" && options.projectID == "demo" && options.apiKey == "key")
        #expect(FirebaseOptions(contentsOfFile: path + ".missing") == nil)

        let name = "plist-\(UUID().uuidString)"
        FirebaseApp.configure(name: name, options: options)
        let app = try #require(FirebaseApp.app(name: name))
        #expect(app.name == name && app.options === options)
        #expect(FirebaseApp.allApps?[name] === app)
        let database = Database.database(app: app)
        #expect(database.app === app)
        #expect(database.reference(withPath: "x").description() == "http://127.0.0.1:9/x?ns=from-plist")
        #expect(Database.database(app: app) === database, "one instance per app and URL")
        let other = Database.database(app: app, url: "http://127.0.0.1:9?ns=other-\(name)")
        #expect(other !== database && other.app === app)
        let deleted = Recorder()
        app.delete { deleted.record("\($0)") }
        #expect(deleted.all == ["true"])
        #expect(FirebaseApp.app(name: name) == nil)
    }

    @Test func theAsyncDeleteSaysWhetherTheAppWasConfigured() async {
        let name = "async-delete-\(UUID().uuidString)"
        FirebaseApp.configure(name: name, options: FirebaseOptions(googleAppID: "1:2:ios:3", gcmSenderID: "2"))
        let app = FirebaseApp.app(name: name)!
        #expect(await app.delete())
        #expect(FirebaseApp.app(name: name) == nil)
        #expect(await app.delete() == false)
    }

    @Test func optionsMadeInCode() {
        let options = FirebaseOptions(googleAppID: "1:2:ios:3", gcmSenderID: "2")
        #expect(options.databaseURL == nil)
        options.databaseURL = "http://127.0.0.1:9?ns=code"
        #expect(options.databaseURL == "http://127.0.0.1:9?ns=code" && options.gcmSenderID == "2")
    }
}

/// Firebase's structure coders and `@ServerTimestamp`.
@Suite("Structure coders")
struct StructureCoderTests {
    struct Post: Codable, Equatable {
        var title: String
        var created: Date
        @ServerTimestamp var updated: Date?
    }

    @Test func encodesToAndDecodesFromFoundationTrees() throws {
        let encoder = Database.Encoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let post = Post(title: "Hi", created: Date(timeIntervalSince1970: 1_700_000_000), updated: nil)
        let tree = try #require(try encoder.encode(post) as? [String: Any])
        #expect(tree["title"] as? String == "Hi")
        #expect((tree["created"] as? NSNumber)?.int64Value == 1_700_000_000_000)
        #expect(tree["updated"] as? [String: String] == [".sv": "timestamp"], "nil is the server-timestamp placeholder")

        let decoder = Database.Decoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let stored: [String: Any] = ["title": "Hi", "created": 1_700_000_000_000, "updated": 1_700_000_123_000]
        let back = try decoder.decode(Post.self, from: stored)
        #expect(back.title == "Hi" && back.created == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(back.updated == Date(timeIntervalSince1970: 1_700_000_123))
        let withoutTimestamp = try decoder.decode(Post.self, from: ["title": "Hi", "created": 0] as [String: Any])
        #expect(withoutTimestamp.updated == nil, "a missing key is a nil timestamp")
        #expect(try Database.Decoder().decode(Int.self, from: 5) == 5, "scalars decode too")
        #expect(try Database.Encoder().encode(7) as? Int == 7)
    }

    @Test func aServerTimestampIsFilledInByTheServer() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("timestamps")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        let before = Date()
        let ref = database.reference(withPath: "posts/p1")
        let written = Recorder()
        try ref.setValue(from: Post(title: "Hi", created: before, updated: nil)) { error in written.record(error.map { "\($0)" } ?? "ok") }
        #expect(try await written.waitFor("ok"))
        let stored = try await server.read("posts/p1/updated", namespace: namespace) as? Double ?? 0
        #expect(stored >= before.timeIntervalSince1970 * 1000 - 5_000, "the server wrote its time: \(stored)")
        let snapshot = try await ref.getData()
        let post = try snapshot.data(as: Post.self)
        #expect(post.updated != nil && abs(post.updated!.timeIntervalSince1970 * 1000 - stored) < 1)
    }
}

/// `FirebaseApp.configure()` in its own process (it sets process-wide defaults): it reads
/// `GoogleService-Info.plist` beside the executable, else the environment.
@Suite("FirebaseApp.configure()")
struct FirebaseAppConfigureTests {
    private static func run(_ executable: URL, environment: [String: String]) async throws -> String {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["configure-app"]
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func readsThePlistElseTheEnvironment() async throws {
        let probe = try builtExecutable(named: "rtdb-client-probe")
        let fromEnvironment = try await Self.run(probe, environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:9", "FIREBASE_DATABASE_NAMESPACE": "env"])
        #expect(fromEnvironment == "url http://127.0.0.1:9/?ns=env app __FIRAPP_DEFAULT")

        // The probe with a GoogleService-Info.plist beside it: the plist wins. A hard link in a
        // directory next to the built probe (same file system) stands in for a copy: copying the
        // 90 MB debug binary blocked a cooperative thread long enough to starve other tests.
        let directory = probe.deletingLastPathComponent().path + "/plist-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = URL(fileURLWithPath: directory + "/rtdb-client-probe")
        guard link(probe.path, copy.path) == 0 else {
            Issue.record("cannot link the probe beside a plist: errno \(errno)")
            return
        }
        let plist: [String: Any] = ["DATABASE_URL": "http://127.0.0.1:9?ns=plist", "GOOGLE_APP_ID": "1:2:ios:3", "GCM_SENDER_ID": "2"]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: directory + "/GoogleService-Info.plist"))
        let fromPlist = try await Self.run(copy, environment: ["FIREBASE_DATABASE_EMULATOR_HOST": "127.0.0.1:9"])
        #expect(fromPlist == "url http://127.0.0.1:9/?ns=plist app __FIRAPP_DEFAULT")
    }
}
