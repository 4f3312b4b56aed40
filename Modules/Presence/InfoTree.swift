public import CoreTree

/// The client-local `/.info` data: `connected`, `serverTimeOffset` and `authenticated`.
///
/// These values describe this client, not the database: they are never sent to or read from the
/// server and never persisted. Listeners at `/.info/...` are served from here.
public struct InfoTree: Sendable, Equatable {
    /// `/.info/connected`: whether the client has a live connection to the server.
    public static let connectedKey: ChildKey = "connected"
    /// `/.info/serverTimeOffset`: milliseconds to add to local time to estimate server time.
    public static let serverTimeOffsetKey: ChildKey = "serverTimeOffset"
    /// `/.info/authenticated`: whether the connection is authenticated.
    public static let authenticatedKey: ChildKey = "authenticated"
    /// `/.info/pendingWrites`: how many writes the server has not acknowledged yet (beyond
    /// Firebase, which has no such location).
    public static let pendingWritesKey: ChildKey = "pendingWrites"

    /// The data below `/.info`.
    public private(set) var node: Node

    /// The initial state: not connected, offset 0, not authenticated, no pending writes.
    public init() {
        node = Node(children: [
            (key: InfoTree.connectedKey, value: Node(.bool(false))),
            (key: InfoTree.serverTimeOffsetKey, value: Node(.number(0))),
            (key: InfoTree.authenticatedKey, value: Node(.bool(false))),
            (key: InfoTree.pendingWritesKey, value: Node(.number(0))),
        ])
    }

    /// Whether `path` (a full path) lies in the `.info` tree.
    public static func contains(_ path: TreePath) -> Bool { path.firstKey == .info }

    /// Sets one value; returns the full path (`/.info/<key>`) when the value changed, else `nil`.
    public mutating func set(_ key: ChildKey, to value: Node) -> TreePath? {
        if node.immediateChild(key) == value { return nil }
        node = node.updatingImmediateChild(key, to: value)
        return TreePath(keys: [.info, key])
    }

    /// The value at a full path inside `.info` (the empty node elsewhere).
    public func value(at path: TreePath) -> Node {
        guard InfoTree.contains(path) else { return .empty }
        return node.child(at: path.droppingFirst)
    }
}
