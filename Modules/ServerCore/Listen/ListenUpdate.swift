public import CoreTree
import Synchronization
import SyncProtocol
public import QueryEngine

/// A change of data a listener must hear about: an overwrite at a path, or a merge of children
/// below a path. The JSON of the data is made once per format and shared by every listener that
/// receives the same change.
public struct ListenUpdate: Sendable {
    /// The change itself.
    public enum Change: Sendable {
        /// The data at ``ListenUpdate/path`` is now this node.
        case overwrite(Node)
        /// Each child path (relative to ``ListenUpdate/path``) now holds its node.
        case merge([(path: TreePath, node: Node)])
    }

    /// Where the listener listens.
    public var listenPath: TreePath
    /// The tag of a query listen (`nil` for the default query).
    public var tag: Int?
    /// The absolute path of the change.
    public var path: TreePath
    /// The payload, shared between listeners.
    public var payload: EncodedPayload
    /// Whether this is the first data of a new listen.
    public var isInitial: Bool

    /// The change.
    public var change: Change { payload.change }
}

/// A change's data and its JSON, made lazily once per format and shared.
public final class EncodedPayload: Sendable {
    /// The change.
    public let change: ListenUpdate.Change
    private let cache = Mutex<(export: String?, plain: String?)>((nil, nil))

    /// Wraps `change`.
    public init(_ change: ListenUpdate.Change) { self.change = change }

    /// The data in export form (priorities kept), as the WebSocket protocol sends it. For a merge,
    /// an object of relative paths to values.
    public var exportForm: String {
        if let done = cache.withLock({ $0.export }) { return done }
        let json = encode(format: .export)
        cache.withLock { $0.export = json }
        return json
    }

    /// The data in plain form (no priorities, arrays where array-like), as the REST API sends it.
    public var plainForm: String {
        if let done = cache.withLock({ $0.plain }) { return done }
        let json = encode(format: .plain)
        cache.withLock { $0.plain = json }
        return json
    }

    private func encode(format: JSONFormat) -> String {
        switch change {
        case .overwrite(let node):
            return node.jsonString(format: format)
        case .merge(let children):
            return ServerMessage.mergeObject(children, format: format)
        }
    }
}

/// Something that listens to a namespace's data: a WebSocket connection or an event stream.
///
/// The database calls these from its own isolation, in order; implementations must not block
/// (queue the message and return).
public protocol DataSubscriber: AnyObject, Sendable {
    /// A change at a location this subscriber listens to.
    func send(_ update: ListenUpdate)

    /// The listen at `path` with `params` and `tag` was removed because the caller may no longer read it
    /// (the rules changed).
    func revoked(path: TreePath, params: QueryParams, tag: Int?)
}

extension DataSubscriber {
    /// Ignores the revocation (for subscribers with no client to tell).
    public func revoked(path: TreePath, params: QueryParams, tag: Int?) {}
}
