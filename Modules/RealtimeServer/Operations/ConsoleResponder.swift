import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerCore

/// The data console at `/.console/`: the page's files (package resources, read on each request)
/// and the two answers the page needs beyond the REST API: `api/session` (whether it must ask for
/// the admin secret) and `api/connections` (the connections view, administrators only).
struct ConsoleResponder {
    let configuration: ServerConfiguration
    let activity: ServerActivity
    let verifier: TokenVerifier

    /// The path prefix the console answers under.
    static let prefix = "/.console"

    /// Whether `path` is the console's.
    static func owns(_ path: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }

    func respond(path: String, method: HTTPRequest.Method, credential: String?, query: [String: String]) async throws -> Response {
        guard method == .get || method == .head else {
            return RESTResponder.error(ServerError(.invalidArgument, "The console answers GET only."), status: .methodNotAllowed)
        }
        if path == ConsoleResponder.prefix {
            return Response(status: .movedPermanently, headers: [.location: ConsoleResponder.prefix + "/"])
        }
        let name = String(path.dropFirst(ConsoleResponder.prefix.count + 1))
        switch name {
        case "api/session":
            return try ConsoleResponder.json(Session(
                loopbackOnly: configuration.isLoopbackOnly, defaultNamespace: configuration.defaultNamespace,
                adminCredentialRequired: !configuration.isLoopbackOnly))
        case "api/connections":
            try await verifier.requireAdmin(credential, "The console's data is for administrators: pass the admin secret as ?auth=.")
            let namespace = query["ns"]
            let connections = activity.directory.connections.filter { namespace == nil || $0.namespace == namespace }
            return try ConsoleResponder.json(["connections": connections])
        default:
            return try file(named: name.isEmpty ? "index.html" : name)
        }
    }

    /// What the page learns before it asks for anything else.
    private struct Session: Encodable {
        let loopbackOnly: Bool
        let defaultNamespace: String
        let adminCredentialRequired: Bool
    }

    private static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        return RESTResponder.json(text)
    }

    /// One of the console's files: plain names only (no directories, no dot files).
    private func file(named name: String) throws -> Response {
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard allowed, !name.hasPrefix("."), let type = ConsoleResponder.contentTypes[(name as NSString).pathExtension],
              let directory = ConsoleResponder.filesDirectory,
              let bytes = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
        else {
            return RESTResponder.error(ServerError(.invalidArgument, "The console has no file \(name)."), status: .notFound)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: "no-cache",
                HTTPField.Name("Content-Security-Policy")!: ConsoleResponder.contentSecurityPolicy,
                HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Where the page's files are: the package's resource bundle beside the executable, where
    /// SwiftPM puts it. Looked up by hand because `Bundle.module` stops the process when the bundle
    /// is missing (a binary copied without it); then the console answers 404 instead.
    static let filesDirectory: URL? = {
        let bundle = Bundle.main.bundleURL.appendingPathComponent("swift-realtime-database_RealtimeServer.resources")
        let directory = bundle.appendingPathComponent("Console")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
        return directory
    }()

    /// The page runs only its own scripts, talks only to this server, and is never framed by
    /// another site (the console acts with an administrator's credential).
    static let contentSecurityPolicy =
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'"

    private static let contentTypes = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "json": "application/json; charset=utf-8", "png": "image/png", "svg": "image/svg+xml",
    ]
}
