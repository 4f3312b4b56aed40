import Persistence
import PersistenceConformance
import Testing

/// The shared persistence conformance suite on the in-memory store (requirements about outliving
/// the process do not apply and say so).
@Suite("conformance memory")
struct MemoryConformanceTests {
    @Test("requirement", arguments: Conformance.Requirement.allCases)
    func requirement(_ requirement: Conformance.Requirement) async throws {
        try await Conformance(.memory, outlivesProcess: false).checkAndRecordOffThread(requirement)
    }
}
