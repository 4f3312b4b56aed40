import NIOCore
import ServerCore

/// Watches a connection that only the server writes to (an event stream) for the client going
/// away: its half-close (FIN: with remote half-closure allowed, the channel stays open otherwise),
/// a reset, or the channel closing. Then it runs `onGone` once and closes the channel, which also
/// fails any write stuck behind the departed reader.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    private let onGone: @Sendable () -> Void

    init(onGone: @escaping @Sendable () -> Void) { self.onGone = onGone }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            onGone()
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onGone()
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        onGone()
        context.fireChannelInactive()
    }
}
