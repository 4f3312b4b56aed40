import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket client that completes the upgrade, sends what it is told, and then never reads,
/// with a tiny receive buffer, so the server's data piles up.
final class StalledSocket {
    private let fd: Int32

    init(port: Int) async throws {
        fd = try connectLoopbackSocket(port: port, receiveBuffer: 4096)
        let request = "GET /.ws?v=5&ns=test HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try write(Array(request.utf8))
        // Wait for the upgrade response without blocking a thread: the server needs the
        // cooperative pool to answer, and tests run in parallel on two cores.
        var buffer = [UInt8](repeating: 0, count: 4096)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) <= 0 {
            guard clock.now < deadline else { throw TestFailure("no upgrade response") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    deinit { close(fd) }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestFailure("send failed") }
            sent += n
        }
    }

    /// Sends one masked text frame (clients must mask).
    func send(_ text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame.append(0x80 | 126)
            frame.append(UInt8(payload.count >> 8))
            frame.append(UInt8(payload.count & 0xFF))
        }
        let mask: [UInt8] = [1, 2, 3, 4]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try write(frame)
    }

    /// Reads (suspending between polls, never blocking) until the bytes received contain `text`:
    /// a reply the server sent, such as `"r":1`.
    func waitToReceive(_ text: String, timeout: Duration = .seconds(30)) async throws {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while !String(decoding: received, as: UTF8.self).contains(text) {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { received += buffer[0..<n]; continue }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK else { throw TestFailure("the server closed before sending \(text)") }
            guard clock.now < deadline else { throw TestFailure("\(text) not received within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Whether the server closed or reset the connection. Drains what is readable to find out;
    /// a stalled reader that was dropped sees EOF or an error.
    func isClosedByPeer() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 { return true }
            if n < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        }
    }
}
