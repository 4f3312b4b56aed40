public import CoreTree
import Foundation

/// What a client asks the server to do: one case per protocol action.
public enum ClientAction: Sendable {
    /// `q`: listen at `path` for `query` (its wire object; empty for the default query), with
    /// the client's `tag` for non-default queries and the hash of the data it already has.
    case listen(path: TreePath, query: Node, tag: Int?, hash: String)
    /// `n`: stop listening.
    case unlisten(path: TreePath, query: Node, tag: Int?)
    /// `p`: replace the data at `path`; with `hash`, only if the current data has that hash.
    case put(path: TreePath, data: Node, hash: String?)
    /// `m`: update several paths (relative to `path`) at once.
    case merge(path: TreePath, children: [(path: TreePath, node: Node)])
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

    static func parse(action: String, body: [String: Any]) throws(ProtocolError) -> ClientAction {
        switch action {
        case "q", "l":
            return .listen(path: try path(body), query: try query(body), tag: try tag(body), hash: body["h"] as? String ?? "")
        case "n", "u":
            return .unlisten(path: try path(body), query: try query(body), tag: try tag(body))
        case "p":
            let hash = body["h"] as? String
            return .put(path: try path(body), data: try data(body), hash: hash)
        case "m":
            return .merge(path: try path(body), children: try mergeChildren(body))
        case "o":
            return .onDisconnectPut(path: try path(body), data: try data(body))
        case "om":
            return .onDisconnectMerge(path: try path(body), children: try mergeChildren(body))
        case "oc":
            return .onDisconnectCancel(path: try path(body))
        case "g":
            return .get(path: try path(body), query: try query(body))
        case "auth", "gauth":
            guard let credential = body["cred"] as? String else {
                throw ProtocolError(.invalidArgument, "\(action) needs a credential string in b.cred.")
            }
            let authVariable: Node?
            if body["noauth"] as? Bool == true {
                authVariable = .empty
            } else if let value = body["authvar"] {
                authVariable = try node(value, what: "b.authvar")
            } else {
                authVariable = nil
            }
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

    private static func path(_ body: [String: Any]) throws(ProtocolError) -> TreePath {
        guard let string = body["p"] as? String else {
            throw ProtocolError(.invalidArgument, "The request needs a path string in b.p.")
        }
        do {
            return try TreePath(validating: string)
        } catch {
            throw ProtocolError(.invalidArgument, error.message)
        }
    }

    private static func tag(_ body: [String: Any]) throws(ProtocolError) -> Int? {
        guard let value = body["t"] else { return nil }
        guard let number = value as? NSNumber, !ClientMessage.isBool(number),
              let tag = Int(exactly: number.doubleValue) else {
            throw ProtocolError(.invalidArgument, "A query tag (b.t) must be an integer.")
        }
        return tag
    }

    private static func query(_ body: [String: Any]) throws(ProtocolError) -> Node {
        guard let value = body["q"] else { return .empty }
        guard value is [String: Any] || value is NSNull else {
            throw ProtocolError(.invalidArgument, "A query (b.q) must be an object.")
        }
        return try node(value, what: "b.q")
    }

    private static func data(_ body: [String: Any]) throws(ProtocolError) -> Node {
        try node(body["d"], what: "b.d")
    }

    private static func mergeChildren(_ body: [String: Any]) throws(ProtocolError) -> [(path: TreePath, node: Node)] {
        guard let object = body["d"] as? [String: Any] else {
            throw ProtocolError(.invalidArgument, "An update (b.d) must be an object of paths to values.")
        }
        var children: [(path: TreePath, node: Node)] = []
        children.reserveCapacity(object.count)
        for (key, value) in object {
            let path: TreePath
            do {
                path = try TreePath(validating: key)
            } catch {
                throw ProtocolError(.invalidArgument, error.message)
            }
            children.append((path, try node(value, what: "b.d[\"\(key)\"]")))
        }
        return children
    }

    private static func node(_ value: Any?, what: String) throws(ProtocolError) -> Node {
        do {
            return try Node(foundationValue: value)
        } catch {
            throw ProtocolError(.invalidArgument, "\(what): \(error.message)")
        }
    }
}
