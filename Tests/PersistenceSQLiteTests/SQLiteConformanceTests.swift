import Persistence
import PersistenceConformance
import PersistenceSQLite
import Testing

/// The shared persistence conformance suite on the SQLite backend.
@Suite("conformance sqlite")
struct SQLiteConformanceTests {
    @Test("requirement", arguments: Conformance.Requirement.allCases)
    func requirement(_ requirement: Conformance.Requirement) async throws {
        try await Conformance(.sqlite).checkAndRecordOffThread(requirement)
    }
}
