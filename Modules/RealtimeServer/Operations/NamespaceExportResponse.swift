import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerCore

/// `GET /.export.json?ns=NAME`: a namespace's whole data as JSON in export format (priorities as
/// `.priority`), the document `rtdb-server import` reads, streamed from one moment of its store
/// while the server goes on serving (``ServerCore/NamespaceDatabase/exportSnapshot(_:)``).
///
/// The caller checks the admin credential first: the export bypasses the security rules. The
/// namespace stays leased (open) until the last byte is sent. The status and headers go out
/// before the data, so a failure part way (the store, or the client going away) ends the
/// response without its last chunk and closes the connection: a client never mistakes a cut-off
/// export for a whole one.
enum NamespaceExportResponse {
    /// The endpoint's path.
    static let path = "/.export.json"

    /// The streaming response for `namespace` (the default namespace when `nil`).
    ///
    /// - Throws: ``ServerCore/ServerError`` when the namespace cannot be opened (before anything
    ///   is sent).
    static func make(namespace: String?, registry: NamespaceRegistry, activity: ServerActivity, logger: Logger) async throws -> Response {
        if let namespace, !namespace.isEmpty { try NamespaceRegistry.checkName(namespace) }
        let database = try await registry.lease(for: namespace)
        let body = ResponseBody { writer in
            do {
                try await database.exportSnapshot { piece in try await writer.write(ByteBuffer(bytes: piece)) }
            } catch {
                await registry.release(database)
                logger.error("export failed part way; the response was cut off", metadata: [
                    "namespace": "\(database.name)", "error": "\(error)",
                ])
                throw error
            }
            await registry.release(database)
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .cacheControl: "no-store",
                .contentDisposition: "attachment; filename=\"\(database.name).json\"",
            ],
            body: body)
    }
}
