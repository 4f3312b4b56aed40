import CoreTree
import Foundation

/// A whole message from the server, parsed by the client. Parsing keeps nulls where they matter:
/// a merge's null values arrive as ``Node/empty`` deletions.
enum IncomingMessage: Sendable {
    /// The handshake (control `h`): server time in ms, session id, host.
    case handshake(timestamp: Int64, sessionID: String, host: String?)
    /// Control `s`: the server tells the client to go away.
    case shutdown(reason: String)
    /// Control `r`: reconnect (the payload names a host).
    case reset(host: String?)
    /// Control `e`: an error to log.
    case error(String)
    /// Another control message (`o` pong and the like), ignored.
    case otherControl(type: String)
    /// The answer to request `number`.
    case reply(number: Int, status: RequestStatus, data: Node)
    /// A `d` or `m` data push.
    case data(DataPush, path: TreePath, tag: Int?)
    /// A merge push with no children, ignored.
    case emptyMerge
    /// A `c` push: the listens at `path` are revoked.
    case listenRevoked(path: TreePath)
    /// An `ac` push: the auth token is revoked.
    case authRevoked(status: String, reason: String?)
    /// Another push (`apc`, `sd`, `rm`, ...), logged and ignored.
    case otherPush(action: String)

    /// Parses one whole message.
    ///
    /// - Throws: ``ProtocolError`` (`malformedFrame`) for text that is not a server message.
    static func parse(_ text: String) throws(ProtocolError) -> IncomingMessage {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        } catch {
            throw malformed("not valid JSON")
        }
        guard let envelope = object as? [String: Any], let type = envelope["t"] as? String,
              let payload = envelope["d"] as? [String: Any] else {
            throw malformed("a message must be {\"t\": \"d\" or \"c\", \"d\": {…}}")
        }
        switch type {
        case "c": return try control(payload)
        case "d": return try data(payload)
        default: throw malformed("unknown message type \"\(type)\"")
        }
    }

    private static func control(_ payload: [String: Any]) throws(ProtocolError) -> IncomingMessage {
        guard let type = payload["t"] as? String else { throw malformed("a control message needs d.t") }
        let body = payload["d"]
        switch type {
        case "h":
            guard let handshake = body as? [String: Any], let timestamp = integer(handshake["ts"]),
                  let session = handshake["s"] as? String else {
                throw malformed("a handshake needs ts and s")
            }
            return .handshake(timestamp: Int64(timestamp), sessionID: session, host: handshake["h"] as? String)
        case "s": return .shutdown(reason: body as? String ?? "")
        case "r": return .reset(host: body as? String)
        case "e": return .error(body as? String ?? String(describing: body ?? "null"))
        default: return .otherControl(type: type)
        }
    }

    private static func data(_ payload: [String: Any]) throws(ProtocolError) -> IncomingMessage {
        if payload["r"] != nil {
            guard let number = integer(payload["r"]) else { throw malformed("a reply needs an integer d.r") }
            guard let body = payload["b"] as? [String: Any], let status = body["s"] as? String else {
                throw malformed("a reply needs b.s")
            }
            let message = status == "ok" ? nil : body["d"] as? String
            return .reply(number: number, status: RequestStatus(status: status, message: message), data: try node(body["d"]))
        }
        guard let action = payload["a"] as? String, let body = payload["b"] as? [String: Any] else {
            throw malformed("a push needs d.a and d.b")
        }
        switch action {
        case "d":
            return .data(.overwrite(try node(body["d"])), path: try path(body), tag: try tag(body))
        case "m":
            guard let object = body["d"] as? [String: Any] else { throw malformed("a merge push needs an object in b.d") }
            if object.isEmpty { return .emptyMerge }
            var children: [(path: TreePath, node: Node)] = []
            children.reserveCapacity(object.count)
            for (key, value) in object {
                children.append((TreePath(unchecked: key), try node(value)))
            }
            children.sort { $0.path < $1.path }
            return .data(.merge(children), path: try path(body), tag: try tag(body))
        case "c":
            return .listenRevoked(path: try path(body))
        case "ac":
            return .authRevoked(status: body["s"] as? String ?? "", reason: body["d"] as? String)
        default:
            return .otherPush(action: action)
        }
    }

    private static func path(_ body: [String: Any]) throws(ProtocolError) -> TreePath {
        guard let string = body["p"] as? String else { throw malformed("a push needs a path in b.p") }
        return TreePath(unchecked: string)
    }

    private static func tag(_ body: [String: Any]) throws(ProtocolError) -> Int? {
        guard let value = body["t"], !(value is NSNull) else { return nil }
        guard let tag = integer(value) else { throw malformed("a push tag (b.t) must be an integer") }
        return tag
    }

    /// A JSON value as a node; null (and absence) is ``Node/empty``.
    private static func node(_ value: Any?) throws(ProtocolError) -> Node {
        do {
            return try Node(foundationValue: value)
        } catch {
            throw malformed("bad data: \(error.message)")
        }
    }

    /// A JSON number that is an integer (not a boolean).
    private static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, !ClientMessage.isBool(number) else { return nil }
        return Int(exactly: number.doubleValue)
    }

    private static func malformed(_ problem: String) -> ProtocolError {
        ProtocolError(.malformedFrame, "Malformed server message: \(problem).")
    }
}
