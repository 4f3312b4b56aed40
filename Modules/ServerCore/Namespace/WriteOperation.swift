public import CoreTree

/// A write to a namespace's tree, as a client sent it (server values not yet resolved).
public enum WriteOperation: Sendable {
    /// Replace the data at `path` (empty removes it).
    case set(path: TreePath, node: Node)
    /// Replace the data at each child path (relative to `path`) at once.
    case update(path: TreePath, children: [(path: TreePath, node: Node)])

    /// Where the write happens.
    public var path: TreePath {
        switch self {
        case .set(let path, _), .update(let path, _): path
        }
    }
}

/// What a conditional write compares the current data with.
public enum WriteCondition: Sendable, Hashable {
    /// Write only if the data at the path has this hash (``CoreTree/Node/hash``; `""` for no data).
    case hash(String)
}

/// How a write ended.
public enum WriteResult: Sendable {
    /// Written and durable. `value` is the data now at the write's path.
    case committed(value: Node)
    /// The condition did not hold; `current` is the data at the path.
    case stale(current: Node)
    /// Refused or failed; nothing was written.
    case failed(ServerError)
}
