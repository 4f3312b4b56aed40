import HTTPTypes
import NIOCore
import NIOHTTPTypes
import ServerCore

/// Gives each HTTP request's body a deadline: from its head to its end. A body that has not
/// arrived by then (a client that stalls or trickles) is answered 408 and the connection closed,
/// so a slow sender cannot hold a request, and the namespace work behind it, open.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var responseStarted = false

    init(timeout: Duration) { self.timeout = TimeAmount(timeout) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            responseStarted = false
            deadline?.cancel()
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) {
                let (handler, context) = loopBound.value
                handler.bodyTimedOut(context)
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head = unwrapOutboundIn(data) { responseStarted = true }
        context.write(data, promise: promise)
    }

    private func bodyTimedOut(_ context: ChannelHandlerContext) {
        deadline = nil
        guard !responseStarted else {
            context.close(promise: nil)
            return
        }
        responseStarted = true
        let body = ByteBuffer(string: RawHTTPResponse.errorJSON("The request's body did not arrive within the server's body timeout."))
        var fields = HTTPFields()
        fields[.contentType] = "application/json; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .requestTimeout, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in RawHTTPResponse.closeGently(channel) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
