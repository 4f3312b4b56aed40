import CoreTree
import SyncClient
import SyncProtocol
import Testing

@Suite("request failure")
struct RequestFailureTests {
    @Test("its code is the server's status; its message the server's words, or a sentence naming the status")
    func codeAndMessage() {
        let said = RequestFailure(status: .permissionDenied, message: "Permission denied")
        #expect(said.code == .permissionDenied)
        #expect(said.message == "Permission denied")
        #expect(said.serverMessage == "Permission denied")
        #expect(said.description == "permission_denied: Permission denied")
        let silent = RequestFailure(status: .unavailable)
        #expect(silent.serverMessage == nil)
        #expect(silent.message.contains("unavailable"))
        #expect(silent.description == "unavailable")
    }

    @Test("the in-memory transport's failures are coded errors with distinct codes")
    func inMemoryTransportErrors() {
        let all: [InMemoryTransportError] = [.refused, .closed, .dropped, .timedOut]
        #expect(Set(all.map(\.code)).count == all.count)
        #expect(InMemoryTransportError.timedOut == .timedOut)
        #expect(InMemoryTransportError.timedOut != .closed)
        #expect(all.allSatisfy { !$0.message.isEmpty && $0.underlyingError == nil })
    }
}
