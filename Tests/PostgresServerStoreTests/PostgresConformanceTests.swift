import Foundation
import Logging
import PostgresServerStore
import RealtimeServer
import ServerStoreConformance
import Testing
import TestSupport

/// The ServerStore conformance suite on PostgreSQL (each run in a namespace of its own).
@Suite("serverstore conformance postgres")
struct PostgresConformanceTests {
    @Test("requirement", arguments: ServerStoreConformance.Requirement.allCases)
    func requirement(_ requirement: ServerStoreConformance.Requirement) async throws {
        let url = try TestPostgres.url()
        let provider = try PostgresStoreProvider(url: url, logger: Logger(label: "test.postgres"))
        let suite = ServerStoreConformance(name: "postgres") { directory in
            try provider.openStore(namespace: ServerStoreConformance.namespaceName(forDirectory: directory))
        }
        try await suite.checkOffThread(requirement)
        await provider.shutdown()
    }
}
