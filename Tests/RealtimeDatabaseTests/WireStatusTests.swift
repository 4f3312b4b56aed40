import Foundation
@testable import RealtimeDatabase
import RealtimeServer
import ServerCore
import SyncProtocol
import Testing

/// Server and client speak one status vocabulary: every rejection the server can send reaches
/// the app as the `DatabaseError.Code` constant that names it.
@Suite struct WireStatusTests {
    /// What the app must see for each way the server refuses a write.
    static let expectations: [(ServerError.Code, DatabaseError.Code)] = [
        (.invalidArgument, .invalidArgument),
        (.tooBig, .tooBig),
        (.permissionDenied, .permissionDenied),
        (.storageFailed, .failure),
        (.notAllowed, .permissionDenied),
        (.unavailable, .unavailable),
    ]

    @Test func everyServerErrorCodeHasAnExpectation() {
        #expect(Set(Self.expectations.map(\.0)) == Set(ServerError.Code.allCases))
    }

    /// Each status the server sends for a refused write, delivered over the wire by a scripted
    /// server (the real server's status for that error), fails the write with the named code
    /// and reverts the local change.
    @Test(arguments: expectations.map { ($0.0.rawValue, $0.1.rawValue) })
    func aRefusedWriteReachesTheAppAsItsCode(serverCode: String, expected: String) async throws {
        let error = ServerError(ServerError.Code(rawValue: serverCode)!, "refused for the test")
        let fake = FakeServer()
        fake.start { request, _ in
            request.action == "p"
                ? (error.wireStatus, ServerMessage.quoted(error.message))
                : (.ok, "\"\"")
        }
        defer { fake.stop() }
        let database = try Clients.make(url: "http://fake.invalid:1?ns=fake")
        database.transport = fake.transport
        defer { database.shutdown() }
        let outcome = try await #require(throws: DatabaseError.self) {
            try await database.reference(withPath: "item").setValue("x")
        }
        #expect(outcome.code == DatabaseError.Code(rawValue: expected))
        #expect(outcome.message == "refused for the test")
    }

    @Test func otherImplementationsSpellingsAreReadAsOurs() {
        #expect(WireStatus(rawValue: "maxretries") == .maxRetries)
        #expect(WireStatus(rawValue: "failed") == .failure)
        #expect(DatabaseError.Code(rawValue: "maxretries") == .maxRetries)
    }
}
