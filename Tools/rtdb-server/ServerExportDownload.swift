import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ServerCore

/// `rtdb-server export` of a namespace a running server serves: the server streams it from a
/// snapshot of its store (`GET /.export.json?ns=NAME`, admin only) and this writes it to the
/// file as it arrives (beside it, renamed into place once whole, as the offline export does).
enum ServerExportDownload {
    /// What a download did.
    struct Report {
        var bytes: Int
        var seconds: Double
    }

    /// Streams `namespace` from the server at `server` (`http://127.0.0.1:8080`) into `file`
    /// (standard output when `nil`), authenticated with `credential`.
    ///
    /// - Throws: ``CommandFailure`` saying why: the server's refusal (a wrong credential, an
    ///   invalid namespace), an unreachable server, or a response cut off part way (nothing is
    ///   then left at `file`).
    static func run(server: String, namespace: String, credential: String, to file: String?) async throws -> Report {
        let started = ContinuousClock.now
        guard var components = URLComponents(string: server), components.scheme == "http" || components.scheme == "https" else {
            throw CommandFailure(description: "--server must be an http:// or https:// URL, not \(server)")
        }
        components.path = "/.export.json"
        components.queryItems = [URLQueryItem(name: "ns", value: namespace)]
        guard let url = components.url?.absoluteString else { throw CommandFailure(description: "cannot make a URL of \(server)") }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(credential)")
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let bytes = try await download(request, client: client, server: server, to: file)
            try await client.shutdown()
            return Report(bytes: bytes, seconds: (ContinuousClock.now - started) / .seconds(1))
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    private static func download(_ request: HTTPClientRequest, client: HTTPClient, server: String, to file: String?) async throws -> Int {
        let response: HTTPClientResponse
        do {
            // An export takes as long as the namespace's size needs: no deadline.
            response = try await client.execute(request, deadline: .distantFuture)
        } catch {
            throw CommandFailure(description: "cannot reach the server at \(server): \(error)")
        }
        guard response.status == .ok else {
            let body = (try? await response.body.collect(upTo: 64 << 10)).map { String(buffer: $0) } ?? ""
            let message = (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["error"] as? String ?? body
            throw CommandFailure(description: "the server at \(server) refused the export (\(response.status.code)): \(message)")
        }
        let destination = try CommandFailure.saying { () throws(ServerError) in try ExportFile(destination: file) }
        var bytes = 0
        do {
            for try await buffer in response.body {
                bytes += buffer.readableBytes
                let piece = Array(buffer.readableBytesView)
                try CommandFailure.saying { () throws(ServerError) in try destination.write(piece) }
            }
        } catch let error as CommandFailure {
            throw error
        } catch {
            // The server ends a failed export without its last chunk: the body is incomplete.
            throw CommandFailure(description: "the export from \(server) was cut off after \(bytes) bytes (the server log says why): \(error)")
        }
        try CommandFailure.saying { () throws(ServerError) in try destination.complete() }
        return bytes
    }
}
