public import CoreTree

/// What a client asks the server to do: one case per protocol action.
public enum ClientAction: Sendable {
    /// `q`: listen at `path` for `query` (its wire object; empty for the default query), with
    /// the client's `tag` for non-default queries and the hash of the data it already has.
    case listen(path: TreePath, query: Node, tag: Int?, hash: String)
    /// `n`: stop listening.
    case unlisten(path: TreePath, query: Node, tag: Int?)
    /// `p`: replace the data at `path`; with `hash`, only if the current data has that hash;
    /// with `stamp`, at most once (see ``WriteStamp``).
    case put(path: TreePath, data: Node, hash: String?, stamp: WriteStamp?)
    /// `m`: update several paths (relative to `path`) at once; with `stamp`, at most once.
    case merge(path: TreePath, children: [(path: TreePath, node: Node)], stamp: WriteStamp?)
    /// `o`: when this connection ends, replace the data at `path`.
    case onDisconnectPut(path: TreePath, data: Node)
    /// `om`: when this connection ends, update several paths below `path`.
    case onDisconnectMerge(path: TreePath, children: [(path: TreePath, node: Node)])
    /// `oc`: cancel the onDisconnect operations at and below `path`.
    case onDisconnectCancel(path: TreePath)
    /// `g`: read the data at `path` (filtered by `query`) once.
    case get(path: TreePath, query: Node)
    /// `auth` (JWT) or `gauth` (other tokens, including the emulator's `owner`).
    case auth(credential: String, authVariable: Node?, isGAuth: Bool)
    /// `unauth`: sign out.
    case unauth
    /// `s`: client statistics (counters), acknowledged and otherwise ignored.
    case stats
    /// `appcheck`: an App Check token.
    case appCheck
    /// `unappcheck` (and the JS SDK's misspelt `unappeck`).
    case unAppCheck

    /// The protocol's name for the action.
    public var name: String {
        switch self {
        case .listen: "q"
        case .unlisten: "n"
        case .put: "p"
        case .merge: "m"
        case .onDisconnectPut: "o"
        case .onDisconnectMerge: "om"
        case .onDisconnectCancel: "oc"
        case .get: "g"
        case .auth(_, _, let isGAuth): isGAuth ? "gauth" : "auth"
        case .unauth: "unauth"
        case .stats: "s"
        case .appCheck: "appcheck"
        case .unAppCheck: "unappcheck"
        }
    }

    /// The action named `action` from its body's fields.
    static func make(action: String, body: RequestBody) throws(ProtocolError) -> ClientAction {
        switch action {
        case "q", "l":
            return .listen(path: try body.requirePath(), query: try body.requireQuery(), tag: try body.requireTag(), hash: body.hash ?? "")
        case "n", "u":
            return .unlisten(path: try body.requirePath(), query: try body.requireQuery(), tag: try body.requireTag())
        case "p":
            return .put(path: try body.requirePath(), data: body.data, hash: body.hash, stamp: try body.requireStamp())
        case "m":
            return .merge(path: try body.requirePath(), children: try body.requireMergeChildren(), stamp: try body.requireStamp())
        case "o":
            return .onDisconnectPut(path: try body.requirePath(), data: body.data)
        case "om":
            return .onDisconnectMerge(path: try body.requirePath(), children: try body.requireMergeChildren())
        case "oc":
            return .onDisconnectCancel(path: try body.requirePath())
        case "g":
            return .get(path: try body.requirePath(), query: try body.requireQuery())
        case "auth", "gauth":
            guard let credential = body.credential else {
                throw ProtocolError(.invalidArgument, "\(action) needs a credential string in b.cred.")
            }
            let authVariable: Node? = body.noAuth ? .empty : body.authVariable
            return .auth(credential: credential, authVariable: authVariable, isGAuth: action == "gauth")
        case "unauth":
            return .unauth
        case "s":
            return .stats
        case "appcheck":
            return .appCheck
        case "unappcheck", "unappeck":
            return .unAppCheck
        default:
            throw ProtocolError(.unknownAction, "Unknown action \"\(action)\".")
        }
    }
}
