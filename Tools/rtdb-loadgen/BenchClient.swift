import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import Synchronization
import SyncProtocol

/// One load-generator WebSocket connection to the server, speaking v5 frames.
///
/// ``run(url:logger:body:)`` connects, hands the connection to `body`, and closes it when `body`
/// returns; it returns what `body` returned.
enum BenchClient {
    /// The client logger: quiet unless something goes wrong.
    static let logger: Logger = {
        var logger = Logger(label: "rtdb-loadgen")
        logger.logLevel = .warning
        return logger
    }()

    static func run<Result: Sendable>(
        url: String, body: @escaping @Sendable (BenchConnection) async throws -> Result
    ) async throws -> Result {
        let box = Mutex<Result?>(nil)
        // Server frames are at most 16384 characters; allow for multi-byte text.
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        try await WebSocketClient.connect(
            url: url, configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger
        ) { inbound, outbound, _ in
            let result = try await body(BenchConnection(inbound: inbound, outbound: outbound))
            box.withLock { $0 = result }
        }
        guard let result = box.withLock({ $0.take() }) else {
            throw LoadgenError.connectionEnded("the WebSocket closed before the client finished")
        }
        return result
    }
}

/// The two halves of a connection: ``send(_:)`` from any task, and one ``makeReceiver()`` for the
/// task that reads.
struct BenchConnection: Sendable {
    let inbound: WebSocketInboundStream
    let outbound: WebSocketOutboundWriter

    /// Sends one protocol message, split into frames when longer than 16384 characters.
    func send(_ message: String) async throws {
        for frame in FrameSplitter.frames(for: message) {
            try await outbound.write(.text(frame))
        }
    }

    /// Runs `reader` (which makes the connection's receiver) in a child task until it returns or
    /// `stop` opens. On stop the reader is cancelled, its receiver ends (``BenchReceiver/next()``
    /// returns nil) and the reader returns what it has; returning from the connection's body then
    /// closes the WebSocket normally. `endedEarly` tells whether the connection ended before `stop`.
    func read<Result: Sendable>(
        until stop: Gate<Void>, _ reader: @escaping @Sendable (BenchConnection) async throws -> Result
    ) async throws -> (result: Result, endedEarly: Bool) {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask { try await reader(self) }
            group.addTask {
                _ = await stop.wait()
                return nil
            }
            var outcome: (Result, Bool)?
            while let next = try await group.next() {
                if let result = next {
                    outcome = (result, stop.value == nil)
                }
                group.cancelAll()
            }
            guard let outcome else { throw LoadgenError.connectionEnded("the reader returned nothing") }
            return outcome
        }
    }

    /// The reader of whole messages; make one per connection.
    func makeReceiver() -> BenchReceiver {
        BenchReceiver(iterator: inbound.messages(maxSize: 1 << 26).makeAsyncIterator())
    }

    /// Reads until the handshake (`{"t":"c","d":{"t":"h",...}}`) arrives.
    func awaitHandshake(_ receiver: inout BenchReceiver) async throws {
        guard let first = try await receiver.next() else {
            throw LoadgenError.connectionEnded("closed before the handshake")
        }
        guard case .handshake = WireMessages.classify(first) else {
            throw LoadgenError.protocolViolation("the first message is not a handshake: \(first.prefix(200))")
        }
    }
}

/// Reads whole protocol messages, reassembling split ones and skipping keep-alives.
struct BenchReceiver {
    private var iterator: WebSocketInboundMessageStream.AsyncIterator
    private var assembler = FrameAssembler(maxMessageBytes: 1 << 26)

    init(iterator: WebSocketInboundMessageStream.AsyncIterator) {
        self.iterator = iterator
    }

    /// The next message, or nil when the connection has closed.
    /// A cancelled task also gets nil: cancellation is how a reader is told to stop.
    mutating func next() async throws -> String? {
        do {
            while let message = try await iterator.next() {
                guard case .text(let frame) = message else { continue }
                switch try assembler.receive(frame) {
                case .message(let text): return text
                case .keepAlive, .incomplete: continue
                case .tooBig(let prefix): throw LoadgenError.protocolViolation("a message over 64 MiB: \(prefix.prefix(100))")
                }
            }
            return nil
        } catch {
            if Task.isCancelled { return nil }
            throw error
        }
    }
}
