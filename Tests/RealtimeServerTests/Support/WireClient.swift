import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import SyncProtocol

/// A raw protocol client for tests: sends envelopes (split into frames when long) and records
/// every whole message the server sends.
final class WireClient: Sendable {
    private let outgoing: AsyncStream<String>.Continuation
    private let log = MessageLog()
    private let connection: Task<Void, any Error>
    private let nextRequest = RequestCounter()

    actor MessageLog {
        var messages: [String] = []
        var closed = false
        func append(_ message: String) { messages.append(message) }
        func close() { closed = true }
    }

    actor RequestCounter {
        var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }

    init(port: Int, namespace: String = "test") {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = continuation
        let log = self.log
        var logger = Logger(label: "wire-client")
        logger.logLevel = .warning
        connection = Task {
            defer { Task { await log.close() } }
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/.ws?v=5&ns=\(namespace)", configuration: .init(maxFrameSize: 1 << 25), logger: logger
            ) { inbound, outbound, _ in
                let writer = Task {
                    for await message in stream {
                        for frame in FrameSplitter.frames(for: message) { try await outbound.write(.text(frame)) }
                    }
                    try await outbound.close(.normalClosure, reason: nil)
                }
                var assembler = FrameAssembler(maxMessageBytes: 1 << 26)
                for try await message in inbound.messages(maxSize: 1 << 26) {
                    guard case .text(let text) = message else { continue }
                    if case .message(let whole) = try assembler.receive(text) { await log.append(whole) }
                }
                writer.cancel()
            }
        }
    }

    /// Sends raw text as one message (split into frames when long).
    func sendRaw(_ text: String) { outgoing.yield(text) }

    /// Sends a request and returns its number.
    @discardableResult
    func send(_ action: String, _ body: String) async -> Int {
        let number = await nextRequest.next()
        outgoing.yield("{\"t\":\"d\",\"d\":{\"r\":\(number),\"a\":\"\(action)\",\"b\":\(body)}}")
        return number
    }

    /// Sends a request and waits for its reply's body (`{"s": …, "d": …}`).
    ///
    /// The waits default to 30 s: the suite runs some 80 tests at once on two cores, and
    /// CPU-bound neighbours (16 MB frames parsed, a thousand streams) have held an in-process
    /// server's first reply for more than 10 s in fresh-clone CI runs.
    func request(_ action: String, _ body: String, timeout: Duration = .seconds(30)) async throws -> [String: Any] {
        let number = await send(action, body)
        return try await reply(to: number, timeout: timeout)
    }

    /// Waits for the reply to request `number`.
    func reply(to number: Int, timeout: Duration = .seconds(30)) async throws -> [String: Any] {
        let message = try await first(timeout: timeout) { message in
            (message["d"] as? [String: Any])?["r"] as? Int == number
        }
        return (message["d"] as! [String: Any])["b"] as! [String: Any]
    }

    /// The raw messages received so far.
    func rawMessages() async -> [String] { await log.messages }

    /// Every message received so far, parsed.
    func messages() async -> [[String: Any]] {
        await log.messages.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) as? [String: Any] }
    }

    /// Data pushes received so far, as (action, body).
    func pushes() async -> [(action: String, body: [String: Any])] {
        await messages().compactMap { message in
            guard message["t"] as? String == "d", let data = message["d"] as? [String: Any],
                  let action = data["a"] as? String, let body = data["b"] as? [String: Any] else { return nil }
            return (action, body)
        }
    }

    /// Waits for the first message matching `predicate`.
    @discardableResult
    func first(timeout: Duration = .seconds(30), where predicate: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let found = await messages().first(where: predicate) { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("no matching message within \(timeout); last received: \(await log.messages.suffix(3).map { String($0.prefix(300)) })")
    }

    /// Whether the server closed the connection.
    var isClosed: Bool { get async { await log.closed } }

    /// Closes the connection.
    func close() async {
        outgoing.finish()
        _ = try? await connection.value
    }
}
