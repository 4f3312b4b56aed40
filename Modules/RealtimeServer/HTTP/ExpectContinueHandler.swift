import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` as the request's head arrives, so a client
/// that asks before it sends a body (curl does for every body over 1 MB) sends it at once instead
/// of waiting out its own timeout (a second, for curl: an 8 MB PATCH spent more time waiting than
/// being written). A body announced larger than the REST limit gets no `100 Continue`: the
/// client may skip sending it, and the request is refused as too big either way.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let maxBodyBytes: Int

    init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data),
           request.headerFields[.expect]?.lowercased() == "100-continue",
           (request.headerFields[.contentLength].flatMap(Int.init) ?? 0) <= maxBodyBytes {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
