public import CoreTree

/// Where an operation came from.
public struct OperationSource: Sendable, Equatable {
    /// From this client's user.
    public var fromUser: Bool
    /// From the server.
    public var fromServer: Bool
    /// For server operations tagged for one query: that query.
    public var query: QueryParams?
    /// Whether the operation is tagged for one query.
    public var tagged: Bool

    /// A user operation.
    public static let user = OperationSource(fromUser: true, fromServer: false, query: nil, tagged: false)
    /// An untagged server operation.
    public static let server = OperationSource(fromUser: false, fromServer: true, query: nil, tagged: false)
    /// A server operation for one query.
    public static func server(query: QueryParams) -> OperationSource {
        OperationSource(fromUser: false, fromServer: true, query: query, tagged: true)
    }
}

/// A change to apply to the sync tree's views.
public enum Operation: Sendable {
    /// Replace the data at `path`.
    case overwrite(source: OperationSource, path: TreePath, node: Node)
    /// Replace the data at several paths below `path`.
    case merge(source: OperationSource, path: TreePath, children: ImmutableTree<Node>)
    /// A user write was acknowledged or reverted; `affected` marks the paths it touched.
    case ackUserWrite(path: TreePath, affected: ImmutableTree<Bool>, revert: Bool)
    /// The server finished sending the data of a listen.
    case listenComplete(source: OperationSource, path: TreePath)

    /// Where the operation applies.
    public var path: TreePath {
        switch self {
        case .overwrite(_, let path, _), .merge(_, let path, _), .ackUserWrite(let path, _, _), .listenComplete(_, let path):
            path
        }
    }

    /// Where the operation came from.
    public var source: OperationSource {
        switch self {
        case .overwrite(let source, _, _), .merge(let source, _, _), .listenComplete(let source, _): source
        case .ackUserWrite: .user
        }
    }

    /// The operation as seen from the child `key`, or `nil` when it does not reach that child.
    func forChild(_ key: ChildKey) -> Operation? {
        switch self {
        case .overwrite(let source, let path, let node):
            if path.isRoot { return .overwrite(source: source, path: .root, node: node.immediateChild(key)) }
            return path.firstKey == key ? .overwrite(source: source, path: path.droppingFirst, node: node) : nil
        case .merge(let source, let path, let children):
            if !path.isRoot {
                return path.firstKey == key ? .merge(source: source, path: path.droppingFirst, children: children) : nil
            }
            guard let child = children.children[key] else { return nil }
            if let value = child.value { return .overwrite(source: source, path: .root, node: value) }
            return .merge(source: source, path: .root, children: child)
        case .ackUserWrite(let path, let affected, let revert):
            if !path.isRoot {
                precondition(path.firstKey == key, "operationForChild called for an unrelated child")
                return .ackUserWrite(path: path.droppingFirst, affected: affected, revert: revert)
            }
            if affected.value != nil {
                precondition(affected.children.isEmpty, "an affected tree should not have overlapping affected paths")
                return self
            }
            return .ackUserWrite(path: .root, affected: affected.subtreeOrEmpty(at: TreePath(keys: [key])), revert: revert)
        case .listenComplete(let source, let path):
            return path.isRoot ? .listenComplete(source: source, path: .root) : .listenComplete(source: source, path: path.droppingFirst)
        }
    }
}
