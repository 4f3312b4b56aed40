public import CoreTree

/// Builds the JSON envelopes a server sends. Data is written in export form (priorities kept),
/// and push paths carry no leading slash, as the real server's do.
public enum ServerMessage {
    /// The first message on a connection: server time, protocol version, host and session id,
    /// and the protocol extensions the server supports (`ext`, left out when none; Firebase
    /// clients ignore it).
    public static func handshake(timestamp: Int64, host: String, sessionID: String, extensions: [String] = []) -> String {
        var fields = "\"ts\":\(timestamp),\"v\":\"\(WireLimits.protocolVersion)\",\"h\":\(quoted(host)),\"s\":\(quoted(sessionID))"
        if !extensions.isEmpty { fields += ",\"ext\":[" + extensions.map(quoted).joined(separator: ",") + "]" }
        return "{\"t\":\"c\",\"d\":{\"t\":\"h\",\"d\":{\(fields)}}}"
    }

    /// The answer to request `number`: a status and its data, already JSON (`""` when none).
    public static func reply(_ number: Int, status: WireStatus, dataJSON: String = "\"\"") -> String {
        "{\"t\":\"d\",\"d\":{\"r\":\(number),\"b\":{\"s\":\(quoted(status.rawValue)),\"d\":\(dataJSON)}}}"
    }

    /// An error answer whose data is a message.
    public static func reply(_ number: Int, status: WireStatus, message: String) -> String {
        reply(number, status: status, dataJSON: quoted(message))
    }

    /// A data push replacing the data at `path` (`d`), tagged for a query listen.
    public static func dataPush(path: TreePath, dataJSON: String, tag: Int? = nil) -> String {
        push("d", path: path, dataJSON: dataJSON, tag: tag)
    }

    /// A data push merging children (relative paths) at `path` (`m`), tagged for a query listen.
    public static func mergePush(path: TreePath, children: [(path: TreePath, node: Node)], tag: Int? = nil) -> String {
        push("m", path: path, dataJSON: mergeObject(children, format: .export), tag: tag)
    }

    /// The JSON object of a merge: each child's relative path to its value, in `format`.
    public static func mergeObject(_ children: [(path: TreePath, node: Node)], format: JSONFormat) -> String {
        var object = "{"
        for (index, child) in children.enumerated() {
            if index > 0 { object += "," }
            object += quoted(child.path.relativeForm)
            object += ":"
            object += child.node.jsonString(format: format)
        }
        return object + "}"
    }

    /// A data push merging children at `path` (`m`) whose object JSON (relative paths to values)
    /// is already made.
    public static func mergePush(path: TreePath, dataJSON: String, tag: Int? = nil) -> String {
        push("m", path: path, dataJSON: dataJSON, tag: tag)
    }

    /// A listen revoked (`c`), for example because rules no longer allow it.
    public static func listenRevoked(path: TreePath, queryJSON: String?) -> String {
        var body = "{\"p\":\(quoted(path.relativeForm))"
        if let queryJSON { body += ",\"q\":\(queryJSON)" }
        body += "}"
        return "{\"t\":\"d\",\"d\":{\"a\":\"c\",\"b\":\(body)}}"
    }

    /// The connection's auth revoked (`ac`).
    public static func authRevoked(status: WireStatus, reason: String) -> String {
        "{\"t\":\"d\",\"d\":{\"a\":\"ac\",\"b\":{\"s\":\(quoted(status.rawValue)),\"d\":\(quoted(reason))}}}"
    }

    /// The answer to a client's ping.
    public static let pong = "{\"t\":\"c\",\"d\":{\"t\":\"o\",\"d\":{}}}"

    /// Tells the client the server is going away and it should not reconnect at once.
    public static func shutdown(reason: String) -> String {
        "{\"t\":\"c\",\"d\":{\"t\":\"s\",\"d\":\(quoted(reason))}}"
    }

    /// A protocol error about a message that could not be answered as a request.
    public static func error(_ message: String) -> String {
        "{\"t\":\"c\",\"d\":{\"t\":\"e\",\"d\":\(quoted(message))}}"
    }

    private static func push(_ action: String, path: TreePath, dataJSON: String, tag: Int?) -> String {
        var body = "{\"p\":\(quoted(path.relativeForm)),\"d\":\(dataJSON)"
        if let tag { body += ",\"t\":\(tag)" }
        body += "}"
        return "{\"t\":\"d\",\"d\":{\"a\":\"\(action)\",\"b\":\(body)}}"
    }

    /// `string` as a JSON string literal.
    public static func quoted(_ string: String) -> String {
        Node(.string(string)).jsonString()
    }
}
