import CoreTree
import Foundation

/// A whole message from a client, parsed from its JSON envelope.
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
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [])
        } catch {
            throw ProtocolError(.malformedFrame, "The message is not valid JSON.")
        }
        guard let envelope = object as? [String: Any], let type = envelope["t"] as? String,
              let payload = envelope["d"] as? [String: Any] else {
            throw ProtocolError(.malformedFrame, "A message must be {\"t\": \"d\" or \"c\", \"d\": {…}}.")
        }
        switch type {
        case "c":
            guard let controlType = payload["t"] as? String else {
                throw ProtocolError(.malformedFrame, "A control message needs a type in d.t.")
            }
            return .control(type: controlType)
        case "d":
            guard let numberValue = payload["r"] as? NSNumber, !isBool(numberValue),
                  let number = Int(exactly: numberValue.doubleValue) else {
                throw ProtocolError(.malformedFrame, "A request needs an integer request number in d.r.")
            }
            guard let action = payload["a"] as? String else {
                return .request(number: number, action: .failure(ProtocolError(.malformedFrame, "A request needs an action in d.a.")))
            }
            let body = payload["b"] as? [String: Any] ?? [:]
            do {
                return .request(number: number, action: .success(try ClientAction.parse(action: action, body: body)))
            } catch {
                return .request(number: number, action: .failure(error))
            }
        default:
            throw ProtocolError(.malformedFrame, "Unknown message type \"\(type)\"; expected \"d\" or \"c\".")
        }
    }

    static func isBool(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    /// Reads the request number from the beginning of a message too big to parse, so the request
    /// can still be answered (`too_big`).
    public static func requestNumber(inPrefix prefix: String) -> Int? {
        guard let range = prefix.range(of: "\"r\":") else { return nil }
        let digits = prefix[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }
}
