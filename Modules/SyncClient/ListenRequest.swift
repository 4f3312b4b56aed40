public import CoreTree
import SyncProtocol

/// What a listen asks for. A listen is keyed by its ``path`` and ``identifier``.
public struct ListenRequest: Sendable, Hashable {
    /// Where to listen.
    public var path: TreePath
    /// The wire query object; ``Node/empty`` for the default query, and then no `q` is sent.
    public var query: Node
    /// The canonical query id; `"default"` for the default query.
    public var identifier: String
    /// The client's tag for a non-default query (sent as `t`); nil for the default query.
    public var tag: Int?

    /// Makes a request.
    public init(path: TreePath, query: Node, identifier: String, tag: Int?) {
        self.path = path
        self.query = query
        self.identifier = identifier
        self.tag = tag
    }
}
