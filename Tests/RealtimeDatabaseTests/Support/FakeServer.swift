import Foundation
import SyncClient
import SyncProtocol
import TestSupport

/// A scripted server on the in-memory transport, for behaviour a real server will not produce
/// on demand (endless `datastale`, the exact auth frame).
final class FakeServer: @unchecked Sendable {
    /// One request the client sent.
    struct Request: @unchecked Sendable {
        let number: Int
        let action: String
        let body: [String: Any]
    }

    let transport = InMemoryTransport()
    // `requests` is guarded by `lock`.
    private let lock = NSLock()
    private var received: [Request] = []
    private var task: Task<Void, Never>?

    /// Serves connections: handshake, then each request goes to `handle`, which sends pushes
    /// and returns the reply's status and data JSON.
    func start(_ handle: @escaping @Sendable (Request, InMemoryServerSide) -> (status: WireStatus, data: String)) {
        let transport = transport
        task = Task {
            while !Task.isCancelled {
                guard let side = try? await transport.accept(timeout: .seconds(60)) else { continue }
                side.sendHandshake()
                while let message = try? await side.receiveMessage(timeout: .seconds(60)) {
                    guard let request = FakeServer.parse(message) else { continue }
                    self.lock.withLock { self.received.append(request) }
                    let reply = handle(request, side)
                    side.sendReply(request.number, status: reply.status, dataJSON: reply.data)
                }
            }
        }
    }

    var requests: [Request] { lock.withLock { received } }

    func stop() { task?.cancel() }

    private static func parse(_ message: String) -> Request? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
              object["t"] as? String == "d", let data = object["d"] as? [String: Any],
              let number = data["r"] as? Int, let action = data["a"] as? String
        else { return nil }
        return Request(number: number, action: action, body: data["b"] as? [String: Any] ?? [:])
    }
}

/// A JWT with the given expiry, signed with the secret the test servers verify
/// (``TestTokens/serverArguments``).
func testJWT(expiresIn seconds: TimeInterval, subject: String = "user-1") -> String {
    TestTokens.token(subject: subject, expiresIn: seconds)
}
