import SyncProtocol
import CoreTree

/// Builds the JSON a client sends: request envelopes and their bodies. Data is written in export
/// form (priorities kept); request paths carry a leading slash.
enum OutgoingMessage {
    /// A request envelope `{"t":"d","d":{"r":N,"a":action,"b":body}}`.
    static func request(_ number: Int, action: String, bodyJSON: String) -> String {
        "{\"t\":\"d\",\"d\":{\"r\":\(number),\"a\":\(ServerMessage.quoted(action)),\"b\":\(bodyJSON)}}"
    }

    /// `{"p":"/path","d":data}` with `"h"` when a hash is given (put, onDisconnect put).
    static func putBody(path: TreePath, data: Node, hash: String?) -> String {
        var body = "{\"p\":\(ServerMessage.quoted(path.wireForm)),\"d\":\(data.jsonString(format: .export))"
        if let hash { body += ",\"h\":\(ServerMessage.quoted(hash))" }
        return body + "}"
    }

    /// `body` (an object) with the exactly-once stamp added as `once`.
    static func stamped(_ body: String, _ stamp: WriteStamp) -> String {
        String(body.dropLast()) + ",\"once\":" + stamp.json + "}"
    }

    /// `{"p":"/path","d":{"rel/path":value,...}}`, null for deletions (merge, onDisconnect merge).
    static func mergeBody(path: TreePath, children: [(path: TreePath, node: Node)]) -> String {
        "{\"p\":\(ServerMessage.quoted(path.wireForm)),\"d\":\(ServerMessage.mergeObject(children, format: .export))}"
    }

    /// `{"p":"/path","d":null}` (onDisconnect cancel).
    static func cancelBody(path: TreePath) -> String {
        "{\"p\":\(ServerMessage.quoted(path.wireForm)),\"d\":null}"
    }

    /// A listen: `{"p":"/path","h":hash,"q":query,"t":tag}`, without `q` for the default query
    /// and without `t` when untagged.
    static func listenBody(_ request: ListenRequest, hash: String) -> String {
        var body = "{\"p\":\(ServerMessage.quoted(request.path.wireForm)),\"h\":\(ServerMessage.quoted(hash))"
        body += queryFields(request)
        return body + "}"
    }

    /// An unlisten: `{"p":"/path","q":query,"t":tag}`, with the same omissions as a listen.
    static func unlistenBody(_ request: ListenRequest) -> String {
        "{\"p\":\(ServerMessage.quoted(request.path.wireForm))" + queryFields(request) + "}"
    }

    /// A get: `{"p":"/path","q":query}`; the query is always sent (`{}` for the default).
    static func getBody(path: TreePath, query: Node) -> String {
        let queryJSON = query.isEmpty ? "{}" : query.jsonString(format: .export)
        return "{\"p\":\(ServerMessage.quoted(path.wireForm)),\"q\":\(queryJSON)}"
    }

    /// `{"cred":token}` (auth and gauth).
    static func authBody(token: String) -> String {
        "{\"cred\":\(ServerMessage.quoted(token))}"
    }

    /// `{"c":{name:1}}` (stats).
    static func statsBody(name: String) -> String {
        "{\"c\":{\(ServerMessage.quoted(name)):1}}"
    }

    /// Whether a token is JWT-shaped (three dot-separated parts), and so is sent with `auth`
    /// rather than `gauth`.
    static func isJWT(_ token: String) -> Bool {
        token.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    private static func queryFields(_ request: ListenRequest) -> String {
        var fields = ""
        if !request.query.isEmpty { fields += ",\"q\":\(request.query.jsonString(format: .export))" }
        if let tag = request.tag { fields += ",\"t\":\(tag)" }
        return fields
    }
}
