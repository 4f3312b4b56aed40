import CoreTree
import SyncProtocol

/// Writes a parsed action back as the envelope a client would send, and describes an action field
/// by field, so two actions compare by what they ask.
enum WireEnvelope {
    /// The envelope `{"t":"d","d":{"r":number,"a":…,"b":{…}}}` carrying `action`.
    static func request(_ number: Int, _ action: ClientAction) -> String {
        var body: [(String, String)] = []
        switch action {
        case .listen(let path, let query, let tag, let hash):
            body = [("p", quoted(path.wireForm)), ("q", json(query, empty: "{}")), ("h", quoted(hash))]
            if let tag { body.append(("t", "\(tag)")) }
        case .unlisten(let path, let query, let tag):
            body = [("p", quoted(path.wireForm)), ("q", json(query, empty: "{}"))]
            if let tag { body.append(("t", "\(tag)")) }
        case .put(let path, let data, let hash, let stamp):
            body = [("p", quoted(path.wireForm)), ("d", json(data, empty: "null"))]
            if let hash { body.append(("h", quoted(hash))) }
            if let stamp { body.append(("once", stamp.json)) }
        case .merge(let path, let children, let stamp):
            body = [("p", quoted(path.wireForm)), ("d", members(children))]
            if let stamp { body.append(("once", stamp.json)) }
        case .onDisconnectPut(let path, let data):
            body = [("p", quoted(path.wireForm)), ("d", json(data, empty: "null"))]
        case .onDisconnectMerge(let path, let children):
            body = [("p", quoted(path.wireForm)), ("d", members(children))]
        case .onDisconnectCancel(let path):
            body = [("p", quoted(path.wireForm))]
        case .get(let path, let query):
            body = [("p", quoted(path.wireForm)), ("q", json(query, empty: "{}"))]
        case .auth(let credential, let authVariable, _):
            body = [("cred", quoted(credential))]
            if let authVariable {
                body.append(authVariable.isEmpty ? ("noauth", "true") : ("authvar", json(authVariable, empty: "null")))
            }
        case .unauth, .stats, .appCheck, .unAppCheck:
            break
        }
        let bodyText = "{" + body.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
        return "{\"t\":\"d\",\"d\":{\"r\":\(number),\"a\":\(quoted(action.name)),\"b\":\(bodyText)}}"
    }

    /// Every field of `action`, in words.
    static func describe(_ action: ClientAction) -> String {
        switch action {
        case .listen(let path, let query, let tag, let hash):
            "listen \(path) \(json(query, empty: "{}")) tag \(String(describing: tag)) hash \(hash.debugDescription)"
        case .unlisten(let path, let query, let tag):
            "unlisten \(path) \(json(query, empty: "{}")) tag \(String(describing: tag))"
        case .put(let path, let data, let hash, let stamp):
            "put \(path) \(json(data, empty: "null")) hash \(String(describing: hash)) stamp \(String(describing: stamp))"
        case .merge(let path, let children, let stamp):
            "merge \(path) \(members(children)) stamp \(String(describing: stamp))"
        case .onDisconnectPut(let path, let data):
            "onDisconnectPut \(path) \(json(data, empty: "null"))"
        case .onDisconnectMerge(let path, let children):
            "onDisconnectMerge \(path) \(members(children))"
        case .onDisconnectCancel(let path):
            "onDisconnectCancel \(path)"
        case .get(let path, let query):
            "get \(path) \(json(query, empty: "{}"))"
        case .auth(let credential, let authVariable, let isGAuth):
            "\(isGAuth ? "gauth" : "auth") \(credential.debugDescription) \(authVariable.map { json($0, empty: "null") } ?? "no authvar")"
        case .unauth, .stats, .appCheck, .unAppCheck:
            action.name
        }
    }

    private static func quoted(_ text: String) -> String { ServerMessage.quoted(text) }

    private static func json(_ node: Node, empty: String) -> String {
        node.isEmpty ? empty : node.jsonString(format: .export)
    }

    /// An update's members as a JSON object (duplicate paths kept, in order).
    private static func members(_ children: [(path: TreePath, node: Node)]) -> String {
        "{" + children.map { quoted($0.path.wireForm) + ":" + json($0.node, empty: "null") }.joined(separator: ",") + "}"
    }
}
