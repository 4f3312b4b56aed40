import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw REST event-stream client: sends the request, waits for the first event, then leaves the
/// way a real client does, with a FIN (an orderly close) or a RST (a close with zero linger).
final class EventStreamSocket {
    private let fd: Int32
    private var closed = false

    init(port: Int, path: String, namespace: String = "test") async throws {
        fd = try connectLoopbackSocket(port: port)
        let request = "GET \(path).json?ns=\(namespace) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n"
        let bytes = Array(request.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw TestFailure("send failed") }
        // Wait (without blocking a thread) until the first event arrives: the listen is in place.
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while !received.contains("event: put") {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                received += String(decoding: buffer[0..<n], as: UTF8.self)
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                throw TestFailure("the stream ended before its first event: \(received)")
            } else {
                guard clock.now < deadline else { throw TestFailure("no first event: \(received)") }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// What arrives after the first event until the server closes the stream.
    func readToEnd(timeout: Duration) async throws -> String {
        var received = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                received += String(decoding: buffer[0..<n], as: UTF8.self)
            } else if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                return received
            } else {
                guard clock.now < deadline else { throw TestFailure("the stream did not end: \(received)") }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    /// Leaves with an orderly close (FIN).
    func closeWithFIN() {
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_WR))
        Glibc.close(fd)
    }

    /// Leaves with a reset (RST): zero linger, then close.
    func closeWithRST() {
        guard !closed else { return }
        closed = true
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
    }

    deinit { if !closed { Glibc.close(fd) } }
}
