import Persistence
import PersistenceConformance
import PersistenceLMDB
import Testing

/// The shared persistence conformance suite on the LMDB backend.
@Suite("conformance lmdb")
struct LMDBConformanceTests {
    @Test("requirement", arguments: Conformance.Requirement.allCases)
    func requirement(_ requirement: Conformance.Requirement) async throws {
        try await Conformance(.lmdb).checkAndRecordOffThread(requirement)
    }
}
