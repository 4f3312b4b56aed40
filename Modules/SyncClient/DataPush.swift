public import CoreTree

/// Data the server pushed for a listen.
public enum DataPush: Sendable {
    /// The data at the push's path is now this (`d`).
    case overwrite(Node)
    /// These children (paths relative to the push's path) are now these values (`m`); a deletion
    /// arrives as ``Node/empty``.
    case merge([(path: TreePath, node: Node)])
}
