import CoreTree
import Foundation
import RealtimeServer
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `GET /.export.json?ns=NAME` on a serving server: administrators only, and one moment of the
/// namespace however many writes land while the export streams.
@Suite("Export endpoint")
struct ExportEndpointTests {
    /// Two counters at either end of the key order and about 6 MB between them (more than the
    /// export's pipe and the socket buffers hold while the client does not read).
    static func tree(counter: Int) -> Node {
        let filler = String(repeating: "y", count: 1000)
        var root = Node(children: (0..<6000).map {
            (key: ChildKey("m\($0)"), value: Node(.string(filler), priority: $0 % 5 == 0 ? .string("p\($0)") : nil))
        }, priority: nil)
        root = Node(children: [(key: ChildKey("bulk"), value: root)])
        root = root.updatingChild(at: "/aaa", to: Node(children: [(key: ChildKey("count"), value: Node(.number(Double(counter))))], priority: .number(1)))
        root = root.updatingChild(at: "/zzz/count", to: Node(.number(Double(counter))))
        return root
    }

    @Test("an export while REST writes land is one moment: the counters written together agree", arguments: ["sqlite", "lmdb", "leveldb"])
    func oneMoment(_ backend: String) async throws {
        let server = try await TestServer.start(backend: backend)
        let expected = Self.tree(counter: 5)
        #expect(try await http("PUT", "\(server.baseURL)/.json?ns=chat", body: expected.jsonString(format: .export)).status == 200)

        let reader = try SlowHTTPReader(port: server.port, target: "/.export.json?ns=chat", headers: ["Authorization": "Bearer owner"])
        // The first bytes of the body come from the store's snapshot: it is taken.
        try await reader.waitForBody()
        let beforeWrites = reader.received.count
        for count in 6...15 {
            let patch = try await http("PATCH", "\(server.baseURL)/.json?ns=chat", body: #"{"aaa/count": \#(count), "zzz/count": \#(count)}"#)
            #expect(patch.status == 200)
        }
        try await reader.readToEnd()
        let (status, body) = try reader.response()
        #expect(status == 200)
        #expect(beforeWrites < body.count / 2, "the export was mostly sent before the writes (\(beforeWrites) of \(body.count) bytes)")
        let exported = try Node(json: body)
        #expect(exported.child(at: "/aaa/count") == Node(.number(5)))
        #expect(exported.child(at: "/zzz/count") == Node(.number(5)))
        // Compared apart from #expect, which would print both trees (megabytes) on failure.
        let sameAsWritten = exported == expected
        #expect(sameAsWritten, "the export differs from the data written before it began")
        #expect(try await http("GET", "\(server.baseURL)/zzz/count.json?ns=chat").body == "15")
        await server.stop()
    }

    @Test("the export needs the admin credential: none, a user's token or a wrong secret get 401 and no data")
    func adminOnly() async throws {
        let server = try await TestServer.start(backend: "sqlite") { $0.auth = AuthConfiguration(secret: TestTokens.secret) }
        let base = "\(server.baseURL)/.export.json?ns=chat"
        #expect(try await http("PUT", "\(server.baseURL)/secret.json?ns=chat&auth=\(TestTokens.secret)", body: #""the data""#).status == 200)
        let refused: [(String, [String: String], String)] = [
            ("no credential", [:], ""),
            ("a user's token", [:], "&auth=\(TestTokens.token(subject: "alice"))"),
            ("a user's token as a bearer", ["Authorization": "Bearer \(TestTokens.token(subject: "alice"))"], ""),
            ("a wrong secret", [:], "&auth=not-the-secret"),
        ]
        for (name, headers, query) in refused {
            let reply = try await http("GET", base + query, headers: headers)
            #expect(reply.status == 401, "\(name): \(reply.status)")
            #expect(!reply.body.contains("the data"), "\(name) got data")
            #expect(reply.body.contains("admin credential"), "\(name): \(reply.body)")
        }
        let admitted = try await http("GET", base, headers: ["Authorization": "Bearer \(TestTokens.secret)"])
        #expect(admitted.status == 200)
        #expect(try Node(jsonString: admitted.body) == Node(children: [(key: ChildKey("secret"), value: Node(.string("the data")))]))
        #expect(try await http("GET", "\(server.baseURL)/.export.json?ns=bad.name&auth=\(TestTokens.secret)").status == 400)
        #expect(try await http("POST", base + "&auth=\(TestTokens.secret)", body: "{}").status == 405)
        await server.stop()
    }
}

/// An HTTP/1.1 exchange over a raw socket with a small receive buffer, read only when the test
/// says: the server's writes back up while it waits. Decodes a chunked body.
final class SlowHTTPReader {
    private let fd: Int32
    private(set) var received: [UInt8] = []
    private static let headerEnd = Array("\r\n\r\n".utf8)

    init(port: Int, target: String, headers: [String: String]) throws {
        fd = try connectLoopbackSocket(port: port, receiveBuffer: 4096)
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let bytes = Array((request + "\r\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("cannot send the request") }
            sent += n
        }
    }

    deinit { close(fd) }

    private var headerLength: Int? {
        guard received.count >= 4 else { return nil }
        for index in 0...(received.count - 4) where received[index..<(index + 4)].elementsEqual(Self.headerEnd) { return index + 4 }
        return nil
    }

    /// Reads until the headers and some of the body are in (suspending between polls).
    func waitForBody(timeout: Duration = .seconds(60)) async throws {
        try await read(until: { self.headerLength.map { self.received.count > $0 + 16 } ?? false }, timeout: timeout)
    }

    /// Reads until the server closes the connection.
    func readToEnd(timeout: Duration = .seconds(120)) async throws {
        try await read(until: { false }, timeout: timeout)
    }

    private func read(until done: () -> Bool, timeout: Duration) async throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !done() {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { received += buffer[0..<n]; continue }
            if n == 0 { return }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw TestFailure("recv failed: errno \(errno)") }
            guard clock.now < deadline else { throw TestFailure("the response did not arrive within \(timeout)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The status and the body (chunked transfer decoded; a body without its last chunk throws).
    func response() throws -> (status: Int, body: [UInt8]) {
        guard let headerLength else { throw TestFailure("no complete response head") }
        let head = String(decoding: received[..<headerLength], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        var rest = received[headerLength...]
        guard head.lowercased().contains("transfer-encoding: chunked") else { return (status, Array(rest)) }
        var body: [UInt8] = []
        while true {
            guard let lineEnd = rest.firstIndex(of: UInt8(ascii: "\r")),
                  let size = Int(String(decoding: rest[rest.startIndex..<lineEnd], as: UTF8.self), radix: 16)
            else { throw TestFailure("a chunk's size line is missing: the body was cut off after \(body.count) bytes") }
            let start = lineEnd + 2
            if size == 0 { return (status, body) }
            guard rest.endIndex >= start + size + 2 else { throw TestFailure("a chunk was cut off after \(body.count) bytes") }
            body += rest[start..<(start + size)]
            rest = rest[(start + size + 2)...]
        }
    }
}
