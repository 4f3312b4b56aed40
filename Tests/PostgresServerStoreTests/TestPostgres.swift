import Foundation
import Testing
import TestSupport

/// The PostgreSQL server the tests use: `RTDB_TEST_POSTGRES_URL`, which `Tools/test` sets after
/// starting a private cluster.
enum TestPostgres {
    /// The URL; fails the test (rather than skipping it) when there is none.
    static func url() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["RTDB_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw SupportFailure(
                "RTDB_TEST_POSTGRES_URL is not set: these tests need PostgreSQL. Run them with Tools/test, which starts a private cluster, or point the variable at a server of yours.")
        }
        return url
    }

    /// The control script of the private cluster (`stop`, `start`, `restart`), when there is one.
    static func control() throws -> String {
        guard let path = ProcessInfo.processInfo.environment["RTDB_TEST_POSTGRES_CTL"], !path.isEmpty else {
            throw SupportFailure("RTDB_TEST_POSTGRES_CTL is not set: restarting PostgreSQL needs the private cluster Tools/test starts.")
        }
        return path
    }

    /// A fresh namespace name.
    static func freshNamespace(_ prefix: String) -> String {
        prefix + "-" + UUID().uuidString.lowercased().prefix(12)
    }
}
