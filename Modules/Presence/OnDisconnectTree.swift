public import CoreTree

/// The onDisconnect writes this client has registered and the server has confirmed.
///
/// The server runs them when the connection drops; the client applies the same writes to its
/// local view at that moment so that its listeners see what the server will hold (as the Firebase
/// clients do). Like those clients, the registrations are kept in memory only: they belong to one
/// connection and are not persisted across restarts.
///
/// Later registrations win over earlier ones where they overlap: a set at a path replaces what
/// was remembered at and below it, and lands inside a remembered ancestor value.
public struct OnDisconnectTree: Sendable, Equatable {
    /// Remembered writes, by full path; no entry is below another.
    private var entries: [TreePath: Node] = [:]

    /// An empty set of registrations.
    public init() {}

    /// Whether nothing is remembered.
    public var isEmpty: Bool { entries.isEmpty }

    /// Remembers that `node` will be written at `path` on disconnect.
    public mutating func remember(_ node: Node, at path: TreePath) {
        if let (ancestor, value) = entry(containing: path) {
            entries[ancestor] = value.updatingChild(at: path.relative(to: ancestor)!, to: node)
            return
        }
        entries = entries.filter { !path.contains($0.key) }
        entries[path] = node
    }

    /// Remembers an update: each child path (relative to `path`) set to its node.
    public mutating func remember(update children: [(path: TreePath, node: Node)], at path: TreePath) {
        for child in children { remember(child.node, at: path.appending(child.path)) }
    }

    /// Forgets everything registered at or below `path` (an onDisconnect cancel).
    public mutating func forget(_ path: TreePath) {
        if let (ancestor, value) = entry(containing: path), ancestor != path {
            entries[ancestor] = value.updatingChild(at: path.relative(to: ancestor)!, to: .empty)
            return
        }
        entries = entries.filter { !path.contains($0.key) }
    }

    /// Forgets everything.
    public mutating func removeAll() { entries.removeAll() }

    /// The writes to apply, parents before children (no entry lies below another, so any order
    /// gives the same data; sorting makes it deterministic).
    public var writes: [(path: TreePath, node: Node)] {
        entries.sorted { $0.key < $1.key }.map { (path: $0.key, node: $0.value) }
    }

    private func entry(containing path: TreePath) -> (TreePath, Node)? {
        for (entryPath, node) in entries where entryPath.contains(path) { return (entryPath, node) }
        return nil
    }

    /// Whether both remember the same writes.
    public static func == (lhs: OnDisconnectTree, rhs: OnDisconnectTree) -> Bool { lhs.entries == rhs.entries }
}
