import CoreTree
import SyncProtocol
import HummingbirdWSClient
import Logging
import NIOSSL

/// One WebSocket opened by ``WebSocketTransport``.
///
/// HummingbirdWSClient runs a connection inside a closure; a task keeps that closure running
/// until ``close()`` is called or the server closes, forwarding text messages to ``frames``.
final class WebSocketTransportConnection: TransportConnection {
    let frames: AsyncThrowingStream<String, any Error>
    private let outbound: WebSocketOutboundWriter
    private let closeRequest: AsyncStream<Void>.Continuation

    private init(
        frames: AsyncThrowingStream<String, any Error>, outbound: WebSocketOutboundWriter,
        closeRequest: AsyncStream<Void>.Continuation
    ) {
        self.frames = frames
        self.outbound = outbound
        self.closeRequest = closeRequest
    }

    func send(_ frame: String) async throws {
        try await outbound.write(.text(frame))
    }

    func close() async {
        closeRequest.finish()
    }

    /// The WebSocket closed before it opened.
    struct ClosedBeforeOpening: CodedError, CustomStringConvertible {
        var code: String { "closedBeforeOpening" }
        var message: String { "the WebSocket closed before it opened" }
        var underlyingError: (any Error)? { nil }
        var description: String { message }
    }

    /// Connects to `url`; returns once the WebSocket is open.
    static func open(
        url: String, maxFrameSize: Int, tlsConfiguration: TLSConfiguration?, logger: Logger
    ) async throws -> WebSocketTransportConnection {
        let (frames, frameSink) = AsyncThrowingStream<String, any Error>.makeStream()
        let (closeSignal, closeRequest) = AsyncStream<Void>.makeStream()
        let opened = OneShot<WebSocketOutboundWriter, any Error>()
        let configuration = WebSocketClientConfiguration(maxFrameSize: maxFrameSize)
        let task = Task {
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: configuration, tlsConfiguration: tlsConfiguration, logger: logger
                ) { inbound, outbound, _ in
                    // Nobody waits any more (timed out or cancelled): close at once.
                    guard opened.settle(.success(outbound)) else { return }
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do {
                                for try await message in inbound.messages(maxSize: maxFrameSize) {
                                    if case .text(let text) = message { frameSink.yield(text) }
                                }
                                frameSink.finish()
                            } catch {
                                frameSink.finish(throwing: error)
                            }
                        }
                        group.addTask {
                            for await _ in closeSignal {}
                        }
                        await group.next()
                        group.cancelAll()
                    }
                }
                opened.settle(.failure(ClosedBeforeOpening()))
                frameSink.finish()
            } catch {
                opened.settle(.failure(error))
                frameSink.finish(throwing: error)
            }
        }
        let outbound = try await withTaskCancellationHandler {
            try await opened.value()
        } onCancel: {
            opened.settle(.failure(CancellationError()))
            task.cancel()
        }
        return WebSocketTransportConnection(frames: frames, outbound: outbound, closeRequest: closeRequest)
    }
}
