import CoreTree

/// A whole message from a client, parsed from its JSON envelope with CoreTree's ``JSONReader``
/// (data goes straight into nodes, nulls keep their meaning).
public enum ClientMessage: Sendable {
    /// A request (`{"t":"d","d":{"r":…,"a":…,"b":…}}`). The action is an error when the request
    /// number could be read but the action or its body could not: the receiver answers that
    /// request with the error.
    case request(number: Int, action: Result<ClientAction, ProtocolError>)
    /// A control message (`{"t":"c","d":{"t":…,"d":…}}`), such as a ping (`p`).
    case control(type: String)

    /// Parses one message.
    ///
    /// - Throws: ``ProtocolError`` (`malformedFrame`) when the text is not an envelope at all.
    public static func parse(_ text: String) throws(ProtocolError) -> ClientMessage {
        var envelope = Envelope()
        do {
            try JSONReader.read(text) { reader throws(CoreTreeError) in try envelope.read(&reader) }
        } catch {
            // JSON that is not valid data (a number out of range, a bad priority) in a request
            // whose number is known: answer that request.
            if error.code != .malformedJSON, let number = envelope.number {
                return .request(number: number, action: .failure(ProtocolError(.invalidArgument, "b.d: \(error.message)", underlying: error)))
            }
            throw ProtocolError(.malformedFrame, error.code == .malformedJSON
                ? "The message is not valid JSON: \(error.message)" : error.message, underlying: error)
        }
        guard let type = envelope.type, envelope.sawPayload else {
            throw ProtocolError(.malformedFrame, "A message must be {\"t\": \"d\" or \"c\", \"d\": {…}}.")
        }
        switch type {
        case "c":
            guard let controlType = envelope.controlType else {
                throw ProtocolError(.malformedFrame, "A control message needs a type in d.t.")
            }
            return .control(type: controlType)
        case "d":
            guard let number = envelope.number else {
                throw ProtocolError(.malformedFrame, "A request needs an integer request number in d.r, written as digits (no fraction or exponent) within ±2^63.")
            }
            guard let action = envelope.action else {
                return .request(number: number, action: .failure(ProtocolError(.malformedFrame, "A request needs an action in d.a.")))
            }
            do {
                return .request(number: number, action: .success(try ClientAction.make(action: action, body: envelope.body)))
            } catch {
                return .request(number: number, action: .failure(error))
            }
        default:
            throw ProtocolError(.malformedFrame, "Unknown message type \"\(type)\"; expected \"d\" or \"c\".")
        }
    }

    /// Reads the request number from the beginning of a message too big to parse, so the request
    /// can still be answered (`too_big`).
    public static func requestNumber(inPrefix prefix: String) -> Int? {
        guard let range = prefix.firstRange(of: "\"r\":") else { return nil }
        let digits = prefix[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    /// The fields of an envelope, in whatever order they come.
    private struct Envelope {
        var type: String?
        var sawPayload = false
        var controlType: String?
        var number: Int?
        var action: String?
        var body = RequestBody()

        mutating func read(_ reader: inout JSONReader) throws(CoreTreeError) {
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "t": type = try Envelope.string(&reader)
                case "d":
                    guard try reader.peek() == .object else {
                        try reader.skipValue()
                        continue
                    }
                    sawPayload = true
                    try readPayload(&reader)
                default: try reader.skipValue()
                }
            }
        }

        private mutating func readPayload(_ reader: inout JSONReader) throws(CoreTreeError) {
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "t": controlType = try Envelope.string(&reader)
                case "r":
                    if try reader.peek() == .number { number = try reader.readWireInteger().flatMap { Int(exactly: $0) } } else { try reader.skipValue() }
                case "a": action = try Envelope.string(&reader)
                case "b":
                    if try reader.peek() == .object { body = try RequestBody.read(&reader, action: action) } else { try reader.skipValue() }
                default: try reader.skipValue()
                }
            }
        }

        private static func string(_ reader: inout JSONReader) throws(CoreTreeError) -> String? {
            if try reader.peek() == .string { return try reader.readString() }
            try reader.skipValue()
            return nil
        }
    }
}
