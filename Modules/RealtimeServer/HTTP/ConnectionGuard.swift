import Logging
import NIOCore
import ServerCore

/// The first handler of every client connection, before any HTTP parsing: it counts the
/// connection, refuses it with 503 above the connection cap, and gives the first request's head a
/// deadline and a size cap (answering 408 or 431), so a client that connects and then sends
/// nothing, or a head that never ends, cannot hold a connection open.
///
/// Later requests on a kept-alive connection are bounded by the HTTP stack's idle timeout and
/// header limits; an upgraded WebSocket by its pings.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let activity: ServerActivity
    private let limits: Limits
    private let warnings: LimitWarnings
    private var state = State.awaitingHead(seen: 0, tail: 0)
    private var counted = false
    private var deadline: Scheduled<Void>?
    private var shutdownKey: Int?

    /// The caps a guard enforces.
    struct Limits: Sendable {
        var maxConnections: Int
        var headerTimeout: Duration
        var maxHeaderBytes: Int
    }

    private enum State {
        /// Reading the first head: bytes seen so far, and the last bytes seen (to find `\r\n\r\n`
        /// across reads), packed most recent first.
        case awaitingHead(seen: Int, tail: UInt32)
        case passing
        case refused
    }

    init(activity: ServerActivity, limits: Limits, warnings: LimitWarnings) {
        self.activity = activity
        self.limits = limits
        self.warnings = warnings
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        let open = activity.connectionOpened()
        if open > limits.maxConnections {
            state = .refused
            warnings.warn(.connections, "refusing connections: \(limits.maxConnections) are open, the most allowed (--max-connections)")
            RawHTTPResponse.send(RawHTTPResponse.bytes(
                status: 503, reason: "Service Unavailable",
                message: "The server has as many connections as it allows; try again shortly.",
                headers: [("Retry-After", "1")]), on: context)
            return
        }
        let channel = context.channel
        shutdownKey = activity.onShutdown(force: { channel.close(promise: nil) })
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(limits.headerTimeout)) {
            let (guardHandler, context) = loopBound.value
            guardHandler.headerTimedOut(context)
        }
    }

    private func headerTimedOut(_ context: ChannelHandlerContext) {
        guard case .awaitingHead(let seen, _) = state else { return }
        state = .refused
        if seen == 0 {
            context.close(promise: nil)
        } else {
            RawHTTPResponse.send(RawHTTPResponse.bytes(
                status: 408, reason: "Request Timeout",
                message: "The request's headers did not arrive within the server's header timeout."), on: context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .passing:
            context.fireChannelRead(data)
        case .refused:
            return
        case .awaitingHead(var seen, var tail):
            let buffer = unwrapInboundIn(data)
            var headEnded = false
            for byte in buffer.readableBytesView {
                seen += 1
                tail = (tail << 8) | UInt32(byte)
                if tail == 0x0D0A_0D0A {
                    headEnded = true
                    break
                }
            }
            if seen > limits.maxHeaderBytes {
                state = .refused
                deadline?.cancel()
                RawHTTPResponse.send(RawHTTPResponse.bytes(
                    status: 431, reason: "Request Header Fields Too Large",
                    message: "The request's line and headers are larger than \(limits.maxHeaderBytes) bytes, the most allowed."), on: context)
                return
            }
            if headEnded {
                state = .passing
                deadline?.cancel()
                deadline = nil
            } else {
                state = .awaitingHead(seen: seen, tail: tail)
            }
            context.fireChannelRead(data)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if counted {
            counted = false
            activity.connectionClosed()
        }
        if let shutdownKey { activity.withdraw(shutdownKey) }
        shutdownKey = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Shutting down: a connection still waiting for its first head has nothing to finish.
        if event is ChannelShouldQuiesceEvent, case .awaitingHead = state {
            state = .refused
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
