import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Clients that ask `Expect: 100-continue` before sending a body (curl, for every body over 1 MB)
/// are told to go on at once, and one announcing a body past the limit is refused unread.
@Suite("Expect: 100-continue")
struct ExpectContinueTests {
    /// A raw HTTP/1.1 exchange: the bytes read until `done` holds for them (at most 10 s).
    private static func read(_ fd: Int32, until done: (String) -> Bool) async throws -> String {
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 8192)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !done(received) && clock.now < deadline {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                received += String(decoding: buffer[0..<n], as: UTF8.self)
            } else if n == 0 {
                break
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        return received
    }

    private static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test("a body-bearing request that expects 100-continue gets 100 Continue before it sends its body, then its answer")
    func continueBeforeBody() async throws {
        let server = try await TestServer.start()
        let fd = try connectLoopbackSocket(port: server.port)
        defer { close(fd) }
        let body = #"{"a": 1, "b/c": "two"}"#
        Self.send(fd, "PATCH /items.json?ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\n\r\n")
        // The barrier: nothing of the body was sent, so only a 100 Continue can answer this.
        let interim = try await Self.read(fd) { $0.contains("\r\n\r\n") }
        #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
        Self.send(fd, body)
        let final = try await Self.read(fd) { $0.contains(#""two"}"#) }
        #expect(final.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(final)")
        #expect(try await http("GET", "\(server.baseURL)/items.json?ns=test").body == #"{"a":1,"b":{"c":"two"}}"#)
        await server.stop()
    }

    @Test("a body announced past 256 MB gets no 100 Continue but 413 at once, and nothing is written")
    func refusedUnread() async throws {
        let server = try await TestServer.start()
        let fd = try connectLoopbackSocket(port: server.port)
        defer { close(fd) }
        Self.send(fd, "PUT /items.json?ns=test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Content-Length: \(300 * 1024 * 1024)\r\nExpect: 100-continue\r\n\r\n")
        let answer = try await Self.read(fd) { $0.contains("\r\n\r\n") && $0.contains("}") }
        #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
        #expect(!answer.contains("100 Continue"), "\(answer)")
        #expect(answer.contains("larger than 256 MB"), "\(answer)")
        #expect(try await http("GET", "\(server.baseURL)/items.json?ns=test").body == "null")
        await server.stop()
    }
}
