public import SyncProtocol
import Foundation
import Synchronization

/// The server's end of an ``InMemoryTransport`` connection, for a test to play the server: read
/// what the client sent, send frames, close or drop the connection.
public final class InMemoryServerSide: Sendable {
    /// Where the client connected.
    public let endpoint: ConnectionEndpoint
    /// The session id the client sent (`ls`), if any.
    public let lastSessionID: String?

    private let fromClient = AsyncQueue<String>()
    private let toClient: AsyncThrowingStream<String, any Error>.Continuation
    private let assembler = Mutex(FrameAssembler(maxMessageBytes: 1 << 28))
    private let closure = Mutex(Closure.open)
    /// The frames the client reads.
    let clientFrames: AsyncThrowingStream<String, any Error>

    private enum Closure: Equatable {
        case open, byClient, byServer
    }

    init(endpoint: ConnectionEndpoint, lastSessionID: String?) {
        self.endpoint = endpoint
        self.lastSessionID = lastSessionID
        (clientFrames, toClient) = AsyncThrowingStream<String, any Error>.makeStream()
    }

    // MARK: Reading what the client sent

    /// The next frame the client sent, exactly as sent (keep-alive `0` and frame counts included),
    /// or nil once the connection is closed and every frame has been read.
    ///
    /// - Throws: ``InMemoryTransportError/timedOut`` when nothing came within `timeout`.
    public func receiveFrame(timeout: Duration = .seconds(5)) async throws -> String? {
        do {
            return try await fromClient.next(timeout: timeout)
        } catch is AsyncQueue<String>.TimedOut {
            throw InMemoryTransportError.timedOut
        }
    }

    /// The next whole message the client sent (split messages joined, keep-alives skipped), or
    /// nil once the connection is closed and everything has been read.
    ///
    /// - Throws: ``InMemoryTransportError/timedOut`` when no message came within `timeout`.
    public func receiveMessage(timeout: Duration = .seconds(5)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw InMemoryTransportError.timedOut }
            guard let frame = try await receiveFrame(timeout: remaining) else { return nil }
            let output = try assembler.withLock { assembler in try assembler.receive(frame) }
            if case .message(let text) = output { return text }
        }
    }

    // MARK: Sending to the client

    /// Sends one raw frame to the client. Ignored once the connection is closed.
    public func sendFrame(_ frame: String) {
        guard closure.withLock({ $0 }) == .open else { return }
        toClient.yield(frame)
    }

    /// Sends a message, split into frames as a server splits them (a count frame first when longer than `maxFrameSize`).
    public func sendMessage(_ message: String, maxFrameSize: Int = WireLimits.maxFrameSize) {
        for frame in FrameSplitter.frames(for: message, maxFrameSize: maxFrameSize) { sendFrame(frame) }
    }

    /// Sends the handshake, as the first message of a connection.
    public func sendHandshake(timestamp: Int64? = nil, sessionID: String = "session-1", host: String = "localhost") {
        let now = timestamp ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
        sendMessage(ServerMessage.handshake(timestamp: now, host: host, sessionID: sessionID))
    }

    /// Answers request `number` with `status` and its data (JSON, `""` by default).
    public func sendReply(_ number: Int, status: WireStatus = .ok, dataJSON: String = "\"\"") {
        sendMessage(ServerMessage.reply(number, status: status, dataJSON: dataJSON))
    }

    // MARK: Ending the connection

    /// Closes the connection cleanly: the client's frame stream finishes.
    public func close() {
        guard end(.byServer) else { return }
        toClient.finish()
        fromClient.finish()
    }

    /// Drops the connection abruptly: the client's frame stream throws `error`.
    public func drop(_ error: any Error = InMemoryTransportError.dropped) {
        guard end(.byServer) else { return }
        toClient.finish(throwing: error)
        fromClient.finish()
    }

    /// Whether either side closed the connection.
    public var isClosed: Bool { closure.withLock { $0 } != .open }

    /// Whether the client closed the connection.
    public var isClosedByClient: Bool { closure.withLock { $0 } == .byClient }

    // MARK: Client side

    func clientSent(_ frame: String) throws {
        guard closure.withLock({ $0 }) == .open else { throw InMemoryTransportError.closed }
        fromClient.push(frame)
    }

    func clientClosed() {
        guard end(.byClient) else { return }
        fromClient.finish()
        toClient.finish()
    }

    /// Marks the connection closed; false when it already was.
    private func end(_ how: Closure) -> Bool {
        closure.withLock { closure in
            guard closure == .open else { return false }
            closure = how
            return true
        }
    }
}
