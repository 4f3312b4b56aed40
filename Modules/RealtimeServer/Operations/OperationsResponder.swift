import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServerCore

/// What operators and orchestrators ask a running server: `/metrics` (Prometheus text format),
/// `/.health` (the process serves requests) and `/.ready` (it can open the default namespace's
/// store and is not shutting down). Metrics are open on a loopback-only server and need the
/// admin credential (`Authorization: Bearer <secret>` or `?auth=`) anywhere else; health and
/// readiness say nothing secret and are open. `/.export.json?ns=NAME` streams a namespace's data
/// in export format from one moment of its store (``NamespaceExportResponse``), administrators
/// only, wherever the server listens.
struct OperationsResponder {
    let configuration: ServerConfiguration
    let activity: ServerActivity
    let verifier: TokenVerifier
    let registry: NamespaceRegistry
    let logger: Logger

    static let paths: Set<String> = ["/metrics", "/.health", "/.ready", NamespaceExportResponse.path]

    func respond(path: String, method: HTTPRequest.Method, credential: String?, query: [String: String]) async throws -> Response {
        guard method == .get || method == .head else {
            return RESTResponder.error(ServerError(.invalidArgument, "\(path) answers GET only."), status: .methodNotAllowed)
        }
        switch path {
        case NamespaceExportResponse.path:
            try await verifier.requireAdmin(
                credential, "Exporting a namespace needs the admin credential (Authorization: Bearer <secret>, or ?auth=).")
            return try await NamespaceExportResponse.make(namespace: query["ns"], registry: registry, activity: activity, logger: logger)
        case "/metrics":
            if !configuration.isLoopbackOnly {
                try await verifier.requireAdmin(
                    credential, "/metrics needs the admin credential on a server reachable from other machines (Authorization: Bearer <secret>).")
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: activity.metrics.exposition(activity: activity))))
        case "/.health":
            return RESTResponder.json(#"{"status":"ok"}"#)
        default:
            if activity.isShuttingDown {
                return RESTResponder.error(ServerError(.unavailable, "The server is shutting down."))
            }
            do {
                let database = try await registry.lease(for: nil, within: .seconds(5))
                await registry.release(database)
            } catch {
                return RESTResponder.error(ServerError(.unavailable, "The default namespace's store is not open: \(error.message)"))
            }
            return RESTResponder.json(#"{"status":"ready"}"#)
        }
    }
}
