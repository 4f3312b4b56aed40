import Logging
import PostgresNIO

/// The tables the store uses, created and migrated by the server itself.
///
/// `rtdb_schema` holds the version. Migrations run in one transaction under an advisory lock,
/// so nodes starting together migrate once; a database migrated by a newer server is refused.
enum PostgresSchema {
    /// The version this build writes and reads.
    static let version = 2

    /// Each migration, by the version it brings the schema to.
    static let migrations: [Int: [PostgresQuery]] = [
        1: [
            """
            CREATE TABLE rtdb_namespaces (
                name text PRIMARY KEY,
                sequence bigint NOT NULL DEFAULT 0,
                trimmed_through bigint NOT NULL DEFAULT 0)
            """,
            """
            CREATE TABLE rtdb_data (
                namespace text NOT NULL,
                path text COLLATE "C" NOT NULL,
                kind smallint NOT NULL,
                value text NOT NULL,
                PRIMARY KEY (namespace, path, kind))
            """,
            """
            CREATE TABLE rtdb_log (
                namespace text NOT NULL,
                sequence bigint NOT NULL,
                entry text NOT NULL,
                committed_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, sequence))
            """,
            """
            CREATE TABLE rtdb_settings (
                namespace text NOT NULL,
                name text NOT NULL,
                value bytea NOT NULL,
                PRIMARY KEY (namespace, name))
            """,
        ],
        // Node leases and the onDisconnect writes each node holds for its connections.
        2: [
            "CREATE TABLE rtdb_nodes (node_id text PRIMARY KEY, lease_until timestamptz NOT NULL)",
            """
            CREATE TABLE rtdb_ondisconnect (
                node_id text NOT NULL,
                connection_id text NOT NULL,
                namespace text NOT NULL,
                writes text NOT NULL,
                PRIMARY KEY (node_id, connection_id))
            """,
        ],
    ]

    /// Brings the database to ``version``.
    static func migrate(_ client: PostgresClient, logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            // Any constant shared by every node: the key of the advisory lock migrations hold.
            try await connection.query("SELECT pg_advisory_xact_lock(72616474)", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS rtdb_schema (version integer NOT NULL)", logger: logger)
            var current = 0
            for try await (stored) in try await connection.query("SELECT version FROM rtdb_schema", logger: logger).decode(Int.self) {
                current = max(current, stored)
            }
            if current > version {
                throw PostgresStoreError(
                    "The PostgreSQL database was set up by a newer rtdb-server (schema \(current); this one knows up to \(version)). Upgrade this server.")
            }
            guard current < version else { return }
            for next in (current + 1)...version {
                for statement in migrations[next] ?? [] { try await connection.query(statement, logger: logger) }
                logger.notice("PostgreSQL schema migrated", metadata: ["version": "\(next)"])
            }
            try await connection.query("DELETE FROM rtdb_schema", logger: logger)
            try await connection.query("INSERT INTO rtdb_schema (version) VALUES (\(version))", logger: logger)
        }
    }
}
