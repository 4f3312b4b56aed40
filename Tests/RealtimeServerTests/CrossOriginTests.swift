import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Browsers on other origins can use the REST API and event streams: preflights are answered and
/// every answer carries the CORS headers.
@Suite("Cross-origin access")
struct CrossOriginTests {
    @Test("a preflight is answered with the methods and the headers asked for; answers, errors and streams allow any origin")
    func corsHeaders() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        let preflight = try await http("OPTIONS", "\(base)/items.json?ns=test", headers: [
            "Origin": "https://app.example", "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "content-type, x-firebase-etag",
        ])
        #expect(preflight.status == 200)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("PATCH") == true)
        #expect(preflight.header("Access-Control-Allow-Headers") == "content-type, x-firebase-etag")
        #expect(preflight.header("Access-Control-Max-Age") == "3600")

        let put = try await http("PUT", "\(base)/items.json?ns=test", body: "1", headers: ["Origin": "https://app.example", "X-Firebase-ETag": "true"])
        #expect(put.status == 200)
        #expect(put.header("Access-Control-Allow-Origin") == "*")
        #expect(put.header("Access-Control-Expose-Headers") == "ETag", "a page can read the ETag for a conditional write")
        let bad = try await http("GET", "\(base)/items.json?ns=test&orderBy=nonsense", headers: ["Origin": "https://app.example"])
        #expect(bad.status == 400)
        #expect(bad.header("Access-Control-Allow-Origin") == "*", "errors are readable too")
        #expect(try await http("GET", "\(base)/items.json?ns=test").body == "1", "a preflight writes nothing")

        let stream = try await EventStreamHead.read(port: server.port, path: "/items.json?ns=test")
        #expect(stream.lowercased().contains("access-control-allow-origin: *"), "\(stream)")
        await server.stop()
    }
}

/// The head of an event-stream response, read from a raw socket (URLSession would wait for the end).
enum EventStreamHead {
    static func read(port: Int, path: String) async throws -> String {
        let fd = try connectLoopbackSocket(port: port)
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nOrigin: https://app.example\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 8192)
        let clock = ContinuousClock()
        // The bound only catches a server that never answers (10 s ran out once in a loaded run).
        let deadline = clock.now + .seconds(120)
        while !received.contains("\r\n\r\n") && clock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                received += String(decoding: buffer[0..<n], as: UTF8.self)
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                break
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        return received
    }
}
