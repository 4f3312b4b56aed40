import Persistence
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import ServerCore
import ServerStoreConformance
import Testing

/// The ServerStore conformance suite on the embedded store, over each storage backend.
@Suite("serverstore conformance")
struct EmbeddedServerStoreConformanceTests {
    static let backends: [StorageBackend] = [.sqlite, .lmdb, .leveldb, .memory]

    @Test("requirement", arguments: backends.map(\.name), ServerStoreConformance.Requirement.allCases)
    func requirement(_ backendName: String, _ requirement: ServerStoreConformance.Requirement) async throws {
        let registry = StorageBackends(Self.backends)
        let suite = ServerStoreConformance(name: backendName, outlivesProcess: backendName != "memory") { directory in
            try await EmbeddedServerStore.open(try registry.backend(named: backendName), directory: directory)
        }
        try await suite.checkAndRecord(requirement)
    }
}
