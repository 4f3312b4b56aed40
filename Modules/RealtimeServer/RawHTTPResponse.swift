import NIOCore

/// A complete HTTP/1.1 response written straight to the socket, for the handlers that refuse a
/// connection before (or instead of) the HTTP stack answering it. It always closes the connection.
enum RawHTTPResponse {
    /// The bytes of a `status` response carrying `{"error": message}`, with `headers` added.
    static func bytes(status: Int, reason: String, message: String, headers: [(String, String)] = []) -> ByteBuffer {
        var escaped = ""
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        let body = "{\"error\":\"\(escaped)\"}"
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return ByteBuffer(string: head + "\r\n" + body)
    }

    /// Writes the response on `context` and closes the connection once it is out.
    static func send(_ buffer: ByteBuffer, on context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
