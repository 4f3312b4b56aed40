import Foundation

/// What the load generator needs to know about a server message.
enum ServerEvent: Equatable {
    /// The connection handshake (`{"t":"c","d":{"t":"h",...}}`).
    case handshake
    /// Another control message, by type (`s` shutdown, `e` error, `o` pong, ...).
    case control(type: String)
    /// A reply to request `request`; `status` is `ok` on success.
    case reply(request: Int, status: String)
    /// A server push by action (`d` overwrite, `m` merge, ...).
    case push(action: String)
    /// Anything else.
    case unknown
}

/// Builds client requests and reads server messages.
///
/// Reading takes a fast path over the exact envelopes rtdb-server writes (`SyncProtocol.ServerMessage`)
/// and falls back to a full JSON parse for any other shape, so the load generator's own CPU use
/// stays small at tens of thousands of messages per second.
enum WireMessages {
    /// A put (`a: "p"`) of raw JSON `valueJSON` at `path` (with a leading slash).
    static func put(request: Int, path: String, valueJSON: String) -> String {
        "{\"t\":\"d\",\"d\":{\"r\":\(request),\"a\":\"p\",\"b\":{\"p\":\"\(path)\",\"d\":\(valueJSON)}}}"
    }

    /// A default listen (`a: "q"`) at `path` with no cached hash.
    static func listen(request: Int, path: String) -> String {
        "{\"t\":\"d\",\"d\":{\"r\":\(request),\"a\":\"q\",\"b\":{\"p\":\"\(path)\",\"h\":\"\"}}}"
    }

    private static let handshakePrefix = Array("{\"t\":\"c\",\"d\":{\"t\":\"h\"".utf8)
    private static let controlPrefix = Array("{\"t\":\"c\",\"d\":{\"t\":\"".utf8)
    private static let replyPrefix = Array("{\"t\":\"d\",\"d\":{\"r\":".utf8)
    private static let statusPrefix = Array(",\"b\":{\"s\":\"".utf8)
    private static let pushPrefix = Array("{\"t\":\"d\",\"d\":{\"a\":\"".utf8)

    /// Classifies a server message.
    static func classify(_ message: String) -> ServerEvent {
        var message = message
        let fast: ServerEvent? = message.withUTF8 { bytes in
            if bytes.starts(with: handshakePrefix) { return .handshake }
            if bytes.starts(with: replyPrefix) {
                var index = replyPrefix.count
                var number = 0
                var digits = 0
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                    number = number * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    index += 1
                    digits += 1
                }
                guard digits > 0, bytes[index...].starts(with: statusPrefix) else { return nil }
                index += statusPrefix.count
                guard let end = bytes[index...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return .reply(request: number, status: String(decoding: bytes[index..<end], as: UTF8.self))
            }
            if bytes.starts(with: pushPrefix) {
                let start = pushPrefix.count
                guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return .push(action: String(decoding: bytes[start..<end], as: UTF8.self))
            }
            if bytes.starts(with: controlPrefix) {
                let start = controlPrefix.count
                guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return .control(type: String(decoding: bytes[start..<end], as: UTF8.self))
            }
            return nil
        }
        return fast ?? classifyParsing(message)
    }

    /// The slow path: a full JSON parse.
    private static func classifyParsing(_ message: String) -> ServerEvent {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.utf8)) as? [String: Any],
              let type = object["t"] as? String, let data = object["d"] as? [String: Any] else { return .unknown }
        switch type {
        case "c":
            guard let control = data["t"] as? String else { return .unknown }
            return control == "h" ? .handshake : .control(type: control)
        case "d":
            if let number = data["r"] as? NSNumber {
                let body = data["b"] as? [String: Any]
                return .reply(request: number.intValue, status: body?["s"] as? String ?? "")
            }
            if let action = data["a"] as? String { return .push(action: action) }
            return .unknown
        default:
            return .unknown
        }
    }

    /// The send timestamp a fan-out push carries: the number after the first `"t":` that is
    /// followed by a number (the envelope's own `"t":"d"` is a string). Nil when there is none,
    /// for example in the `null` pushed when listening begins.
    static func sentNanoseconds(in message: String) -> UInt64? {
        var message = message
        return message.withUTF8 { bytes -> UInt64? in
            let count = bytes.count
            var index = 0
            while index + 4 < count {
                if bytes[index] == UInt8(ascii: "\""), bytes[index + 1] == UInt8(ascii: "t"),
                   bytes[index + 2] == UInt8(ascii: "\""), bytes[index + 3] == UInt8(ascii: ":") {
                    var end = index + 4
                    while end < count, isNumberByte(bytes[end]) { end += 1 }
                    if end > index + 4 {
                        let text = String(decoding: bytes[(index + 4)..<end], as: UTF8.self)
                        if let integer = UInt64(text) { return integer }
                        if let double = Double(text), double >= 0 { return UInt64(double) }
                    }
                    index = end
                } else {
                    index += 1
                }
            }
            return nil
        }
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "-")
    }
}
