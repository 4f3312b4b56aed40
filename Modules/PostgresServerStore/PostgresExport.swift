import CoreTree
import Logging
import PostgresNIO
import ServerCore

/// A namespace's rows (``TreeRows``) streamed out as one document in export format, from one
/// `REPEATABLE READ` transaction: every commit of every node is in it whole or not at all.
enum PostgresExport {
    /// Streams `namespace`'s data to `write` in pieces of about 256 KB.
    ///
    /// The rows come in the order of their paths with `/` read as the lowest character (keys hold
    /// no control characters, so `chr(1)` stands for it): every subtree's rows then come together,
    /// a node's priority row before its children, as ``ServerCore/ExportJSONWriter`` needs. The
    /// database sorts them (on disk when they do not fit its `work_mem`); PostgresNIO fetches them
    /// as the writer consumes them, so this process holds a few pieces whatever the size.
    static func run(namespace: String, client: PostgresClient, logger: Logger,
                    write: ([UInt8]) async throws -> Void) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            // It idles while its reader is slow, and holds no locks (PostgresSessionSettings).
            try await connection.query("SET LOCAL idle_in_transaction_session_timeout = 0", logger: logger)
            let rows = try await connection.query("""
                SELECT path, kind, value FROM rtdb_data WHERE namespace = \(namespace)
                ORDER BY replace(path, '/', chr(1)) COLLATE "C", kind
                """, logger: logger)
            let pending = PendingPieces()
            let output = ExportOutput(chunkBytes: 256 << 10) { piece throws(ServerError) in pending.pieces.append(piece) }
            var writer = ExportJSONWriter(output: output)
            for try await (path, kind, value) in rows.decode((String, Int16, String).self) {
                let keys = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { Array($0)[...] }
                switch kind {
                case TreeRows.leaf:
                    try writer.add(member: keys, json: Array(value.utf8))
                case TreeRows.priority:
                    let priority = try TreeRows.decodePriority(value)
                    try writer.add(member: keys + [Array(".priority".utf8)[...]], json: priority.node.jsonBytes())
                default:
                    throw PostgresStoreError("A stored row at \(path) has an unknown kind \(kind).")
                }
                while let piece = pending.next() { try await write(piece) }
            }
            try writer.finish()
            while let piece = pending.next() { try await write(piece) }
        }
    }

    /// The pieces the writer made since they were last sent (the writer hands them over
    /// synchronously; they are sent, awaited, between rows).
    private final class PendingPieces {
        var pieces: [[UInt8]] = []

        /// The oldest piece not yet sent, taken.
        func next() -> [UInt8]? { pieces.isEmpty ? nil : pieces.removeFirst() }
    }
}
