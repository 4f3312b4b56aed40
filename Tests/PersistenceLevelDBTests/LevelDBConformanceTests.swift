import Persistence
import PersistenceConformance
import PersistenceLevelDB
import Testing

/// The shared persistence conformance suite on the LevelDB backend.
@Suite("conformance leveldb")
struct LevelDBConformanceTests {
    @Test("requirement", arguments: Conformance.Requirement.allCases)
    func requirement(_ requirement: Conformance.Requirement) async throws {
        try await Conformance(.leveldb).checkAndRecordOffThread(requirement)
    }
}
