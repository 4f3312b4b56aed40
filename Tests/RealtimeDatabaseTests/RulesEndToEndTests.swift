import CoreTree
import Foundation
import QueryEngine
@_spi(Testing) @testable import RealtimeDatabase
import Testing
import TestSupport

/// The client library against a server enforcing rules, the whole way: a denied write reverts
/// locally and its completion gets permission denied; a denied listen gets its cancel block.
@Suite("Rules end to end")
struct RulesEndToEndTests {
    static let rules = """
    {"rules": {"users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}}}}
    """

    @Test func deniedWritesRevertAndDeniedListensAreCancelled() async throws {
        let rulesFile = NSTemporaryDirectory() + "rtdb-e2e-rules-\(UUID().uuidString).json"
        _ = FileManager.default.createFile(atPath: rulesFile, contents: Data(Self.rules.utf8))
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        let server = try await ServerProcess.launch(backend: "memory", arguments: TestTokens.serverArguments + ["--rules", rulesFile])
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("rules-e2e")
        let database = try Clients.make(server, namespace: namespace)
        defer { database.shutdown() }
        database.setAuthToken(TestTokens.token(subject: "alice"))

        // Allowed: alice's own data.
        let own = Recorder()
        database.reference(withPath: "users/alice/name").setValue("Alice") { error, _ in own.record(error == nil ? "ok" : "\(error!)") }
        #expect(try await own.waitFor("ok"))

        // Denied write: shown at once, then reverted; the completion says permission denied.
        let values = Recorder()
        let bob = database.reference(withPath: "users/bob/name")
        bob.observe(.value, with: { values.record("\($0.value ?? "nil")") }, withCancel: { values.record("cancelled: \($0)") })
        let completion = Recorder()
        bob.setValue("Mallory") { error, _ in completion.record(error.map { "\($0)" } ?? "ok") }
        #expect(try await completion.waitFor(count: 1))
        #expect(completion.all.first?.lowercased().contains("permission") == true, "\(completion.all)")
        #expect(try await values.waitFor(count: 1))
        #expect(values.all.contains { $0.hasPrefix("cancelled:") && $0.lowercased().contains("permission") }, "the listen is cancelled: \(values.all)")
        #expect(try await server.read("users/bob/name", namespace: namespace, auth: TestTokens.secret) == nil, "nothing was written")
        #expect(try await server.read("users/alice/name", namespace: namespace, auth: TestTokens.secret) as? String == "Alice")
    }

    /// The async single-event forms tell a refused listen from an empty location: the first
    /// throws permission denied, the second returns an empty snapshot.
    @Test func asyncSingleEventsThrowWhenTheListenIsRefused() async throws {
        let rulesFile = NSTemporaryDirectory() + "rtdb-e2e-rules-\(UUID().uuidString).json"
        _ = FileManager.default.createFile(atPath: rulesFile, contents: Data(Self.rules.utf8))
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        let server = try await ServerProcess.launch(backend: "memory", arguments: TestTokens.serverArguments + ["--rules", rulesFile])
        defer { Task { await server.shutDown() } }
        let database = try Clients.make(server, namespace: Clients.namespace("rules-once"))
        defer { database.shutdown() }
        database.setAuthToken(TestTokens.token(subject: "alice"))

        let empty = try await database.reference(withPath: "users/alice/none").singleEvent(of: .value)
        #expect(!empty.exists())
        do {
            let snapshot = try await database.reference(withPath: "users/bob").singleEvent(of: .value)
            Issue.record("a refused listen returned a snapshot: \(snapshot)")
        } catch let error as DatabaseError {
            #expect(error.code == .permissionDenied, "\(error)")
        }
        do {
            let (snapshot, _) = try await database.reference(withPath: "users/bob").singleEventAndPreviousSiblingKey(of: .childAdded)
            Issue.record("a refused listen returned a child: \(snapshot)")
        } catch let error as DatabaseError {
            #expect(error.code == .permissionDenied, "\(error)")
        }
    }

    /// Firebase's async single-event forms do not throw: an allowed read returns, and a refused
    /// one never does, as with Firebase, while the throwing form at the same place throws.
    @Test func firebasesAsyncSingleEventsNeverReturnWhenTheListenIsRefused() async throws {
        let rulesFile = NSTemporaryDirectory() + "rtdb-e2e-rules-\(UUID().uuidString).json"
        _ = FileManager.default.createFile(atPath: rulesFile, contents: Data(Self.rules.utf8))
        defer { try? FileManager.default.removeItem(atPath: rulesFile) }
        let server = try await ServerProcess.launch(backend: "memory", arguments: TestTokens.serverArguments + ["--rules", rulesFile])
        defer { Task { await server.shutDown() } }
        let database = try Clients.make(server, namespace: Clients.namespace("rules-firebase-once"))
        defer { database.shutdown() }
        database.setAuthToken(TestTokens.token(subject: "alice"))

        let allowed = await database.reference(withPath: "users/alice/none").observeSingleEvent(of: .value)
        #expect(!allowed.exists())
        let (child, previous) = await database.reference(withPath: "users/alice").observeSingleEventAndPreviousSiblingKey(of: .value)
        #expect(!child.exists() && previous == nil)

        // Both forms wait on one listen, sent once the client is back online, and refused.
        database.goOffline()
        let repo = database.repo
        func waiting() -> Int { repo.perform { repo.observers.values.filter { $0.query.path.wireForm == "/users/bob" }.count } }
        let returned = Recorder()
        let firebaseForm = Task {
            _ = await database.reference(withPath: "users/bob").observeSingleEvent(of: .value)
            returned.record("returned")
        }
        #expect(try await waitUntil { waiting() == 1 })
        let throwingForm = Task { try await database.reference(withPath: "users/bob").singleEvent(of: .value) }
        #expect(try await waitUntil { waiting() == 2 })
        database.goOnline()
        let error = await #expect(throws: DatabaseError.self) { try await throwingForm.value }
        #expect(error?.code == .permissionDenied)
        await database.settle()
        #expect(returned.all.isEmpty, "Firebase's form returned after a refused listen")
        #expect(waiting() == 0, "the refused registrations are gone")
        _ = firebaseForm  // suspended for good, as Firebase's is
    }
}
