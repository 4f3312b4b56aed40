import NIOCore
import SyncProtocol
import ServerCore

/// A complete HTTP/1.1 response written straight to the socket, for the handlers that refuse a
/// connection before (or instead of) the HTTP stack answering it. It always closes the connection.
enum RawHTTPResponse {
    /// The body of every error answer: `{"error": message}`.
    static func errorJSON(_ message: String) -> String {
        "{\"error\":\(ServerMessage.quoted(message))}"
    }

    /// The bytes of a `status` response carrying `{"error": message}`, with `headers` added.
    static func bytes(status: Int, reason: String, message: String, headers: [(String, String)] = []) -> ByteBuffer {
        let body = errorJSON(message)
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return ByteBuffer(string: head + "\r\n" + body)
    }

    /// Writes the response on `context`, then closes the connection.
    ///
    /// The request may not have been read to its end. Closing a socket with unread input resets
    /// it, and the reset can destroy the response before the client reads it; so the output is
    /// closed first (the client sees the response, then end of stream), and the socket a moment
    /// later, while the caller discards whatever else arrives.
    static func send(_ buffer: ByteBuffer, on context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in closeGently(channel) }
    }

    /// Closes `channel`'s output now and the whole channel after a short linger.
    static func closeGently(_ channel: any Channel) {
        channel.close(mode: .output).whenComplete { _ in
            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        }
    }
}
