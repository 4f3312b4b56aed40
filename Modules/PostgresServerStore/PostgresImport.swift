import CoreTree
import Foundation
public import Logging
import NIOCore
import NIOFileSystem
import PostgresNIO

/// Loads a JSON export (Firebase's, or rtdb-server's) of any size into a namespace stored in
/// PostgreSQL, replacing its data, while the nodes that serve it keep running.
///
/// The whole import is one transaction: it locks the namespace's row (as every node's commit
/// does, so commits of the namespace wait for it), deletes the old rows, streams the document's
/// rows in with `COPY` as ``CoreTree/JSONStreamReader`` reads the file in 1 MB chunks, and
/// advances the namespace's sequence with its change log trimmed to it. A process killed at any
/// moment, or a lost connection, rolls the transaction back: the namespace keeps its old data.
/// Nodes read the old data until the commit; then each finds the log trimmed past what it holds,
/// drops its cached data and loads what its clients watch again. Settings (the security rules,
/// the exactly-once ledger) are kept. Server values in the document resolve to the import's
/// start time, as a write then would.
public enum PostgresImport {
    /// What an import did.
    public struct Report: Sendable {
        /// Bytes of JSON read.
        public var bytes: Int
        /// Rows written.
        public var rows: Int
        /// From the start to the commit.
        public var seconds: Double

        /// JSON megabytes (10^6 bytes) read per second.
        public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    }

    /// Replaces the data of `namespace` in the PostgreSQL database at `url` with the JSON
    /// document in `file`.
    ///
    /// - Parameters:
    ///   - batchBytes: rows are sent in `COPY` batches of about this many bytes.
    ///   - progress: called with the bytes of the document read so far, after each chunk.
    /// - Throws: ``PostgresStoreError``: `invalidInput` for a bad URL, a malformed document or
    ///   data that cannot be stored (the message names the byte), `database` when PostgreSQL
    ///   fails or the file cannot be read. Nothing is changed then.
    public static func run(
        file: String, namespace: String, url: String, logger: Logger, serverTime: Int64,
        batchBytes: Int = 8 << 20, progress: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws -> Report {
        let started = ContinuousClock.now
        let client = PostgresClient(
            configuration: try PostgresURL.configuration(url, settings: PostgresSessionSettings.keepalives), backgroundLogger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        try await PostgresSchema.migrate(client, logger: logger)
        try await client.query("INSERT INTO rtdb_namespaces (name) VALUES (\(namespace)) ON CONFLICT (name) DO NOTHING", logger: logger)
        var report = try await transaction(client, namespace: namespace, logger: logger) { connection in
            var sequence: Int64 = 0
            for try await value in try await connection.query(
                "SELECT sequence FROM rtdb_namespaces WHERE name = \(namespace) FOR UPDATE", logger: logger
            ).decode(Int64.self) { sequence = value }
            try await connection.query("DELETE FROM rtdb_data WHERE namespace = \(namespace)", logger: logger)
            var rows = CopyRows(namespace: namespace, serverTime: serverTime, batchBytes: batchBytes, connection: connection, logger: logger)
            var reader = JSONStreamReader()
            var bytes = 0
            do {
                do {
                    try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file)) { handle in
                        for try await chunk in handle.readChunks(chunkLength: .mebibytes(1)) {
                            bytes += chunk.readableBytes
                            for item in try reader.read(chunk.readableBytesView) { try await rows.add(item) }
                            try await rows.flushIfFull()
                            progress(bytes)
                        }
                    }
                    for item in try reader.finish() { try await rows.add(item) }
                    try await rows.finish()
                } catch {
                    // The batch still being sent ends before the transaction rolls back.
                    await rows.abandon()
                    throw error
                }
            } catch let error as CoreTreeError {
                throw PostgresStoreError("\(file) cannot be imported: \(error.message)", code: .invalidInput, underlying: error)
            } catch let error as PostgresStoreError {
                throw error
            } catch let error as PSQLError {
                throw PostgresStoreError("PostgreSQL failed while importing into namespace \(namespace).", underlying: error)
            } catch {
                throw PostgresStoreError("cannot read \(file): \(error)", underlying: error)
            }
            let next = sequence + 1
            try await connection.query("DELETE FROM rtdb_log WHERE namespace = \(namespace)", logger: logger)
            try await connection.query(
                "UPDATE rtdb_namespaces SET sequence = \(next), trimmed_through = \(next) WHERE name = \(namespace)", logger: logger)
            try await connection.query("SELECT pg_notify('rtdb_changes', \(namespace))", logger: logger)
            return Report(bytes: bytes, rows: rows.written, seconds: 0)
        }
        let elapsed = ContinuousClock.now - started
        report.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return report
    }
}

extension PostgresImport {
    /// Runs `body` in a transaction; its own failure comes out as it is, PostgreSQL's as a
    /// ``PostgresStoreError``.
    private static func transaction<T: Sendable>(
        _ client: PostgresClient, namespace: String, logger: Logger, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger, body)
        } catch let error as PostgresTransactionError {
            if let inner = error.closureError as? PostgresStoreError { throw inner }
            throw PostgresStoreError(
                "PostgreSQL failed while importing into namespace \(namespace); nothing was changed.",
                underlying: error.closureError ?? error.commitError ?? error.beginError ?? error)
        }
    }
}

/// The rows of an import's pieces, sent to PostgreSQL in `COPY` batches.
///
/// One batch is sent while the next is read and formatted (the two took turns before: the
/// importer and PostgreSQL each waited for the other about half of the time); a batch waits for
/// the one before it, so the rows arrive in order and the connection runs one `COPY` at a time.
private struct CopyRows {
    let namespace: String
    let serverTime: Int64
    let batchBytes: Int
    let connection: PostgresConnection
    let logger: Logger
    private var rows = TreeRows()
    private var pendingBytes = 0
    private(set) var written = 0
    /// The `COPY` of the batch before, still running.
    private var sending: Task<Void, any Error>?

    init(namespace: String, serverTime: Int64, batchBytes: Int, connection: PostgresConnection, logger: Logger) {
        (self.namespace, self.serverTime, self.batchBytes, self.connection, self.logger) = (namespace, serverTime, batchBytes, connection, logger)
    }

    /// Adds one piece: its rows, after deleting what it replaces (rare: only a document whose
    /// keys are out of key order or repeated has such pieces).
    mutating func add(_ item: JSONStreamItem) async throws {
        var node = item.node
        if item.containsServerValues && ServerValue.containsPlaceholder(node) {
            node = try ServerValue.resolve(node, existing: .empty, serverTime: serverTime, at: item.path)
        }
        if item.isPriority, let owner = item.path.parent {
            if item.replaces { try await delete(ownerPriorityOf: owner) }
            if let priority = TreeRows.priority(of: node) { append(priorityOf: owner, priority) }
            return
        }
        if item.replaces { try await delete(at: item.path) }
        let before = rows.paths.count
        rows.add(node, at: item.path)
        for index in before..<rows.paths.count { pendingBytes += rows.paths[index].utf8.count + rows.values[index].utf8.count + 16 }
    }

    private mutating func append(priorityOf owner: TreePath, _ priority: Priority) {
        rows.addPriority(priority, atText: TreeRows.text(owner))
        pendingBytes += 32
    }

    /// Sends the rows gathered so far once they pass ``batchBytes``.
    mutating func flushIfFull() async throws {
        if pendingBytes >= batchBytes { try await flush() }
    }

    /// Sends the rows gathered so far and waits until PostgreSQL has them all.
    mutating func finish() async throws {
        try await flush()
        try await waitForSending()
    }

    /// Waits for the batch being sent, ignoring its failure: the import has already failed.
    mutating func abandon() async {
        _ = try? await sending?.value
        sending = nil
    }

    private mutating func waitForSending() async throws {
        let running = sending
        sending = nil
        try await running?.value
    }

    /// Starts sending the rows gathered so far, once the batch before has been sent.
    mutating func flush() async throws {
        guard !rows.paths.isEmpty else { return }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(pendingBytes + rows.paths.count * 8)
        var prefix = ByteBuffer()
        CopyText.write(namespace, to: &prefix)
        prefix.writeInteger(UInt8(ascii: "\t"))
        let kinds = [TreeRows.leaf: "\t\(TreeRows.leaf)\t", TreeRows.priority: "\t\(TreeRows.priority)\t"]
        for index in rows.paths.indices {
            buffer.writeImmutableBuffer(prefix)
            CopyText.write(rows.paths[index], to: &buffer)
            buffer.writeString(kinds[rows.kinds[index]] ?? "\t\(rows.kinds[index])\t")
            CopyText.write(rows.values[index], to: &buffer)
            buffer.writeInteger(UInt8(ascii: "\n"))
        }
        try await waitForSending()
        let (connection, logger) = (self.connection, self.logger)
        sending = Task {
            try await connection.copyFrom(table: "rtdb_data", columns: ["namespace", "path", "kind", "value"], logger: logger) { writer in
                try await writer.write(buffer)
            }
        }
        written += rows.paths.count
        rows = TreeRows()
        pendingBytes = 0
    }

    /// Deletes the rows at and below `path`, after sending what came before.
    private mutating func delete(at path: TreePath) async throws {
        try await flush()
        try await waitForSending()
        let (from, to) = TreeRows.belowRange(path)
        try await connection.query("""
            DELETE FROM rtdb_data WHERE namespace = \(namespace)
            AND (path = \(TreeRows.text(path)) OR (path >= \(from) AND path < \(to)))
            """, logger: logger)
    }

    private mutating func delete(ownerPriorityOf owner: TreePath) async throws {
        try await flush()
        try await waitForSending()
        try await connection.query("""
            DELETE FROM rtdb_data WHERE namespace = \(namespace) AND kind = \(TreeRows.priority) AND path = \(TreeRows.text(owner))
            """, logger: logger)
    }
}

/// PostgreSQL's `COPY` text format: a backslash, tab, newline or carriage return in a value is
/// written as its escape.
enum CopyText {
    /// Writes `text` escaped into `buffer`, byte by byte over its UTF-8 (the escaped characters
    /// are all ASCII, so no multi-byte character is split).
    static func write(_ text: String, to buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            guard bytes.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                buffer.writeBytes(bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case 0x5C: buffer.writeStaticString("\\\\")
                case 0x09: buffer.writeStaticString("\\t")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0D: buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
        }
    }
}
