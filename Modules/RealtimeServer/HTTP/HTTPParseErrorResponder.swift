import NIOCore
import NIOHTTP1
import ServerCore

/// Sits right after the HTTP decoder and answers a request the decoder cannot parse (an unknown
/// method, a bad `Content-Length`, bytes that are not HTTP, a head over the decoder's limits)
/// with 400 or 431 and closes the connection, instead of leaving the client waiting.
final class HTTPParseErrorResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // After the answer, whatever else the client sends is dropped unread.
        if !answered { context.fireChannelRead(data) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parseError = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // Handing the error on matters: a request body cut short surfaces as a parse error at end
        // of input, and the body's reader must fail rather than see an early end.
        defer { context.fireErrorCaught(error) }
        guard !answered, context.channel.isActive else { return }
        answered = true
        let status: HTTPResponseStatus
        let message: String
        switch parseError {
        case .headerOverflow:
            status = .requestHeaderFieldsTooLarge
            message = "The request's headers are larger than the server allows."
        default:
            status = .badRequest
            message = "The request is not valid HTTP/1.1 (\(parseError)); use GET, PUT, PATCH, POST or DELETE with a valid Content-Length."
        }
        // Written as HTTP parts: the response encoder sits between this handler and the socket.
        let body = ByteBuffer(string: RawHTTPResponse.errorJSON(message))
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in RawHTTPResponse.closeGently(channel) }
    }
}
