import Foundation
import Logging
import PostgresServerStore
import ServerCore
import ServerStoreConformance
import Testing
import TestSupport

/// Every PostgreSQL test, one at a time: one of them stops and restarts the shared cluster.
@Suite("PostgreSQL", .serialized)
enum PostgresTests {}

extension PostgresTests {
/// The ServerStore conformance suite on PostgreSQL (each run in a namespace of its own).
@Suite("serverstore conformance postgres")
struct PostgresConformanceTests {
    @Test("requirement", arguments: ServerStoreConformance.Requirement.allCases)
    func requirement(_ requirement: ServerStoreConformance.Requirement) async throws {
        let url = try TestPostgres.url()
        let provider = try PostgresStoreProvider(url: url, logger: Logger(label: "test.postgres"))
        let suite = ServerStoreConformance(name: "postgres") { directory in
            try await provider.openStore(namespace: ServerStoreConformance.namespaceName(forDirectory: directory))
        }
        var failure: (any Error)?
        do { try await suite.checkAndRecord(requirement) } catch { failure = error }
        await provider.shutdown()
        if let failure { throw failure }
    }
}
}
