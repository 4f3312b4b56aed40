public import CoreTree
import Foundation
import Logging
import PostgresNIO
public import ServerCore
import Synchronization

/// One namespace in PostgreSQL, shared by every rtdb-server node that opens it
/// (``ServerCore/SharedServerStore``).
///
/// A commit is one transaction: it locks the namespace's row in `rtdb_namespaces`, reads the
/// entries other nodes logged since the caller's sequence, lets the caller decide, then writes the
/// tree rows, the log entry and the new sequence, and notifies the other nodes
/// (`NOTIFY rtdb_changes`, the namespace as payload). Open it through ``PostgresStoreProvider``.
public final class PostgresServerStore: SharedServerStore {
    /// The namespace.
    public let namespace: String
    private let provider: PostgresStoreProvider
    private let handlerID = UUID()
    private let closed = Mutex(false)

    init(namespace: String, provider: PostgresStoreProvider) {
        self.namespace = namespace
        self.provider = provider
    }

    private var client: PostgresClient { provider.client }
    private var logger: Logger { provider.logger }

    private func checkOpen() throws(PostgresStoreError) {
        if closed.withLock({ $0 }) { throw PostgresStoreError("The store of namespace \(namespace) is closed.", code: .closed) }
    }

    // MARK: - ServerStore

    public func read(at path: TreePath, limit: Int) async throws -> StoredData {
        try checkOpen()
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("reading namespace \(namespace)", seconds: 60) {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                let sequence = try await PostgresServerStore.number(
                    "SELECT sequence FROM rtdb_namespaces WHERE name = \(namespace)", on: connection, logger: logger)
                // Too large is an answer, not a failure of the transaction.
                do {
                    let node = try await PostgresTreeReads.subtree(at: path, namespace: namespace, limit: limit, on: connection, logger: logger)
                    return Result<StoredData, ServerError>.success(StoredData(node: node, version: UInt64(sequence)))
                } catch let error as ServerError {
                    return .failure(error)
                }
            }
        }.get()
    }

    public func readShallow(at path: TreePath, limit: Int) async throws -> StoredShallowData {
        try checkOpen()
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("reading namespace \(namespace)", seconds: 60) {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                do {
                    return Result<StoredShallowData, ServerError>.success(
                        try await PostgresTreeReads.shallow(at: path, namespace: namespace, limit: limit, on: connection, logger: logger))
                } catch let error as ServerError {
                    return .failure(error)
                }
            }
        }.get()
    }

    public func commit(_ change: StoreChange) async throws {
        let writes: [WriteOperation] = change.writes.map { .set(path: $0.path, node: $0.node) }
        _ = try await commitExclusively(after: .max) { _ in SharedCommit(change: change, writes: writes) }
    }

    /// Reads the rows in one `REPEATABLE READ, READ ONLY` transaction (held open for the whole
    /// export, so PostgreSQL keeps the row versions it shows until it ends), sorted by the
    /// database, fetched as `write` takes the pieces. No time limit: an export takes as long as
    /// the namespace's size and the receiver need.
    public func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws {
        try checkOpen()
        try provider.checkReachable("the export")
        try await PostgresExport.run(namespace: namespace, client: client, logger: logger, write: write)
    }

    public func setting(named name: String) async throws -> [UInt8]? {
        try checkOpen()
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("reading a setting") {
            var value: [UInt8]?
            let rows = try await client.query(
                "SELECT value FROM rtdb_settings WHERE namespace = \(namespace) AND name = \(name)", logger: logger)
            for try await bytes in rows.decode(ByteBuffer.self) { value = Array(buffer: bytes) }
            return value
        }
    }

    public func settings(withPrefix prefix: String) async throws -> [StoreSetting] {
        try checkOpen()
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("reading settings") {
            var found: [StoreSetting] = []
            let rows = try await client.query(
                "SELECT name, value FROM rtdb_settings WHERE namespace = \(namespace) AND left(name, length(\(prefix))) = \(prefix)",
                logger: logger)
            for try await (name, bytes) in rows.decode((String, ByteBuffer).self) {
                found.append(StoreSetting(name: name, value: Array(buffer: bytes)))
            }
            return found
        }
    }

    public func saveSetting(named name: String, _ value: [UInt8]) async throws {
        _ = try await commitExclusively(after: .max) { _ in
            SharedCommit(change: nil, writes: [], settings: [StoreSetting(name: name, value: value)])
        }
    }

    public func close() async throws {
        try closed.withLock { closed throws(PostgresStoreError) in
            if closed { throw PostgresStoreError("The store of namespace \(namespace) is already closed.", code: .closed) }
            closed = true
        }
        provider.removeHandler(handlerID, namespace: namespace)
    }

    // MARK: - SharedServerStore

    public func loadWithSequence() async throws -> (root: Node, sequence: UInt64) {
        try checkOpen()
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("loading namespace \(namespace)", seconds: 60) {
            try await client.withTransaction(logger: logger) { connection in
                // One snapshot for the sequence and the rows.
                try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                let sequence = try await PostgresServerStore.number(
                    "SELECT sequence FROM rtdb_namespaces WHERE name = \(namespace)", on: connection, logger: logger)
                var builder = TreeRows.Builder()
                let rows = try await connection.query(
                    "SELECT path, kind, value FROM rtdb_data WHERE namespace = \(namespace)", logger: logger)
                for try await (path, kind, value) in rows.decode((String, Int16, String).self) {
                    try builder.add(path: path, kind: kind, value: value)
                }
                return (builder.finish(), UInt64(sequence))
            }
        }
    }

    public func changes(after sequence: UInt64) async throws -> [SharedLogEntry]? {
        try checkOpen()
        try provider.checkReachable("reading the change log")
        let (namespace, client, logger) = (self.namespace, self.client, self.logger)
        return try await PostgresStoreProvider.bounded("reading the change log of \(namespace)") {
            try await client.withConnection { connection in
                try await PostgresServerStore.entries(after: sequence, namespace: namespace, on: connection, logger: logger)
            }
        }
    }

    public func commitExclusively(
        after sequence: UInt64,
        _ decide: @escaping @Sendable ([SharedLogEntry]?) async throws -> SharedCommit?
    ) async throws -> UInt64 {
        try checkOpen()
        try provider.checkReachable("the commit")
        let (namespace, client, logger, retention) = (self.namespace, self.client, self.logger, provider.logRetention)
        let gate = CommitGate()
        return try await PostgresStoreProvider.bounded(
            "committing to namespace \(namespace)", seconds: PostgresSessionSettings.commitSeconds, gate: gate) {
            try await client.withTransaction(logger: logger) { connection in
                let current = try await PostgresServerStore.number(
                    "SELECT sequence FROM rtdb_namespaces WHERE name = \(namespace) FOR UPDATE", on: connection, logger: logger)
                let missed: [SharedLogEntry]? =
                    sequence >= UInt64(current) ? [] : try await PostgresServerStore.entries(after: sequence, namespace: namespace, on: connection, logger: logger)
                guard let commit = try await decide(missed) else { return UInt64(current) }
                if let change = commit.change {
                    try await PostgresServerStore.writeRows(change, namespace: namespace, on: connection, logger: logger)
                }
                let settings = (commit.change?.settings ?? []) + commit.settings
                for setting in settings {
                    if setting.value.isEmpty {
                        try await connection.query(
                            "DELETE FROM rtdb_settings WHERE namespace = \(namespace) AND name = \(setting.name)", logger: logger)
                        continue
                    }
                    try await connection.query("""
                        INSERT INTO rtdb_settings (namespace, name, value) VALUES (\(namespace), \(setting.name), \(ByteBuffer(bytes: setting.value)))
                        ON CONFLICT (namespace, name) DO UPDATE SET value = excluded.value
                        """, logger: logger)
                }
                let next = current + 1
                let entry = try LogEntryCoding.encode(writes: commit.writes, settings: settings)
                try await connection.query(
                    "INSERT INTO rtdb_log (namespace, sequence, entry) VALUES (\(namespace), \(next), \(entry))", logger: logger)
                try await connection.query("UPDATE rtdb_namespaces SET sequence = \(next) WHERE name = \(namespace)", logger: logger)
                if next % 1000 == 0, next > retention {
                    let through = next - retention
                    try await connection.query(
                        "DELETE FROM rtdb_log WHERE namespace = \(namespace) AND sequence <= \(through)", logger: logger)
                    try await connection.query(
                        "UPDATE rtdb_namespaces SET trimmed_through = \(through) WHERE name = \(namespace)", logger: logger)
                }
                // Delivered to the other nodes when the transaction commits.
                try await connection.query("SELECT pg_notify('rtdb_changes', \(namespace))", logger: logger)
                try gate.enterCommit()
                return UInt64(next)
            }
        }
    }

    public func onChange(_ handler: @escaping @Sendable () -> Void) {
        provider.addHandler(handlerID, namespace: namespace, handler)
    }

    public func holdOnDisconnect(connection: String, writes: [HeldWrite]) async throws {
        try checkOpen()
        try provider.checkReachable("holding onDisconnect writes")
        let (namespace, client, logger, node) = (self.namespace, self.client, self.logger, provider.nodeID)
        let text = writes.isEmpty ? nil : try LogEntryCoding.encode(held: writes)
        _ = try await PostgresStoreProvider.bounded("holding onDisconnect writes", seconds: 5) {
            if let text {
                try await client.query("""
                    INSERT INTO rtdb_ondisconnect (node_id, connection_id, namespace, writes) VALUES (\(node), \(connection), \(namespace), \(text))
                    ON CONFLICT (node_id, connection_id) DO UPDATE SET writes = excluded.writes
                    """, logger: logger)
            } else {
                try await client.query(
                    "DELETE FROM rtdb_ondisconnect WHERE node_id = \(node) AND connection_id = \(connection)", logger: logger)
            }
            return true
        }
    }

    public func takeOnDisconnect(connection: String) async throws -> Bool {
        let (client, logger, node) = (self.client, self.logger, provider.nodeID)
        return try await PostgresStoreProvider.bounded("taking back onDisconnect writes", seconds: 5) {
            var taken = false
            let rows = try await client.query(
                "DELETE FROM rtdb_ondisconnect WHERE node_id = \(node) AND connection_id = \(connection) RETURNING 1", logger: logger)
            for try await _ in rows.decode(Int.self) { taken = true }
            return taken
        }
    }

    // MARK: - Rows

    /// The one number `query` selects (0 when it selects no row).
    private static func number(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        var result: Int64 = 0
        for try await value in try await connection.query(query, logger: logger).decode(Int64.self) { result = value }
        return result
    }

    /// The entries after `sequence`; `nil` when the log was trimmed past it.
    private static func entries(after sequence: UInt64, namespace: String, on connection: PostgresConnection,
                                logger: Logger) async throws -> [SharedLogEntry]? {
        let trimmed = try await number(
            "SELECT trimmed_through FROM rtdb_namespaces WHERE name = \(namespace)", on: connection, logger: logger)
        if Int64(clamping: sequence) < trimmed { return nil }
        var entries: [SharedLogEntry] = []
        let rows = try await connection.query(
            "SELECT sequence, entry FROM rtdb_log WHERE namespace = \(namespace) AND sequence > \(Int64(clamping: sequence)) ORDER BY sequence",
            logger: logger)
        for try await (number, text) in rows.decode((Int64, String).self) {
            entries.append(try LogEntryCoding.decode(text, sequence: UInt64(number)))
        }
        return entries
    }

    /// Rewrites the rows `change` touches: for each of its outermost written paths, the rows at
    /// and below it; a leaf at an ancestor turns into a parent (its priority kept as the
    /// parent's); a priority write edits its node's priority; ancestors left with nothing but a
    /// priority lose it.
    private static func writeRows(_ change: StoreChange, namespace: String, on connection: PostgresConnection, logger: Logger) async throws {
        var rows = TreeRows()
        var parents: Set<TreePath> = []
        var removedBelow: Set<TreePath> = []
        // Every write counts, also one a later write in the commit undid: children written into a
        // leaf made it a parent (keeping its priority), a removal may have emptied ancestors.
        for write in change.writes where write.path.lastKey?.isPriorityKey != true {
            var ancestor = write.path.parent
            while let current = ancestor {
                if write.node.isEmpty { removedBelow.insert(current) } else { parents.insert(current) }
                ancestor = current.parent
            }
        }
        // A statement per written path: each is an index range scan. (One statement for the whole
        // group, as a join against arrays of ranges, a LATERAL join or one OR per range, measured
        // 3-4x slower: the planner scanned many rows.)
        for write in change.coveringWrites {
            let path = write.path
            if path.lastKey?.isPriorityKey == true, let owner = path.parent {
                try await writePriority(write.node, of: owner, namespace: namespace, on: connection, logger: logger)
                continue
            }
            let (from, to) = TreeRows.belowRange(path)
            try await connection.query("""
                DELETE FROM rtdb_data WHERE namespace = \(namespace)
                AND (path = \(TreeRows.text(path)) OR (path >= \(from) AND path < \(to)))
                """, logger: logger)
            rows.add(write.node, at: path)
        }
        if !parents.isEmpty {
            try await turnLeavesIntoParents(Array(parents), namespace: namespace, rows: &rows, on: connection, logger: logger)
        }
        // In slices, so one statement's parameters stay small.
        var start = 0
        while start < rows.paths.count {
            let end = min(start + 5000, rows.paths.count)
            let (paths, kinds, values) = (Array(rows.paths[start..<end]), Array(rows.kinds[start..<end]), Array(rows.values[start..<end]))
            try await connection.query("""
                INSERT INTO rtdb_data (namespace, path, kind, value)
                SELECT \(namespace), * FROM unnest(\(paths)::text[], \(kinds)::smallint[], \(values)::text[])
                """, logger: logger)
            start = end
        }
        if !removedBelow.isEmpty {
            // An empty node has no priority.
            let texts = removedBelow.map(TreeRows.text)
            try await connection.query("""
                DELETE FROM rtdb_data AS a WHERE a.namespace = \(namespace) AND a.kind = \(TreeRows.priority) AND a.path = ANY(\(texts))
                AND NOT EXISTS (SELECT 1 FROM rtdb_data AS b WHERE b.namespace = a.namespace AND b.path >= a.path || '/' AND b.path < a.path || '0')
                """, logger: logger)
        }
    }

    /// Replaces the leaf rows among `ancestors` (children are being written into them) by the
    /// priority rows of the parents they become.
    private static func turnLeavesIntoParents(_ ancestors: [TreePath], namespace: String, rows: inout TreeRows,
                                              on connection: PostgresConnection, logger: Logger) async throws {
        let texts = ancestors.map(TreeRows.text)
        var leaves: [(String, String)] = []
        let found = try await connection.query("""
            SELECT path, value FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = ANY(\(texts))
            """, logger: logger)
        for try await (path, value) in found.decode((String, String).self) { leaves.append((path, value)) }
        guard !leaves.isEmpty else { return }
        try await connection.query("""
            DELETE FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = ANY(\(leaves.map(\.0)))
            """, logger: logger)
        for (path, value) in leaves {
            if let priority = try TreeRows.decodeLeaf(value, at: path).priority { rows.addPriority(priority, atText: path) }
        }
    }

    /// Sets (or, with the empty node, removes) the priority of the node at `owner`: inside its
    /// leaf row, or as its priority row when it has children; nothing when it holds no data.
    private static func writePriority(_ value: Node, of owner: TreePath, namespace: String, on connection: PostgresConnection,
                                      logger: Logger) async throws {
        let text = TreeRows.text(owner)
        let priority = TreeRows.priority(of: value)
        var leafValue: String?
        for try await stored in try await connection.query(
            "SELECT value FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = \(text)", logger: logger
        ).decode(String.self) { leafValue = stored }
        if let leafValue {
            let leaf = try TreeRows.decodeLeaf(leafValue, at: text).withPriority(priority)
            try await connection.query("""
                UPDATE rtdb_data SET value = \(leaf.jsonString(format: .export))
                WHERE namespace = \(namespace) AND kind = \(TreeRows.leaf) AND path = \(text)
                """, logger: logger)
            return
        }
        try await connection.query(
            "DELETE FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.priority) AND path = \(text)", logger: logger)
        guard let priority else { return }
        let (from, to) = TreeRows.belowRange(owner)
        try await connection.query("""
            INSERT INTO rtdb_data (namespace, path, kind, value)
            SELECT \(namespace), \(text), \(TreeRows.priority), \(TreeRows.encode(priority))
            WHERE EXISTS (SELECT 1 FROM rtdb_data WHERE namespace = \(namespace) AND path >= \(from) AND path < \(to))
            """, logger: logger)
    }
}
