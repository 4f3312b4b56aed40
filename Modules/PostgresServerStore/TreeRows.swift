import CoreTree

/// How a namespace's tree is laid out in `rtdb_data`: one row per leaf (kind 0, the leaf as
/// JSON in export format, its priority included) and one per priority of a node with children
/// (kind 1). Paths are text (`/a/b`, the root `""`) compared byte by byte (`COLLATE "C"`), so a
/// subtree is the path itself and the range [`path/`, `path0`): `/` and `0` are neighbours.
struct TreeRows {
    static let leaf: Int16 = 0
    static let priority: Int16 = 1

    var paths: [String] = []
    var kinds: [Int16] = []
    var values: [String] = []

    /// The text of `path`.
    static func text(_ path: TreePath) -> String {
        path.isRoot ? "" : "/" + path.keys.map(\.stringValue).joined(separator: "/")
    }

    /// The first and the first-after-last text of the rows strictly below `path`.
    static func belowRange(_ path: TreePath) -> (from: String, to: String) {
        let base = text(path)
        return (base + "/", base + "0")
    }

    /// Adds the rows of `node`, found at `path`.
    mutating func add(_ node: Node, at path: TreePath) {
        add(node, atText: TreeRows.text(path))
    }

    /// Adds the rows of `node`, each child's path text made from its parent's (not from every key
    /// again: an import spent a tenth of its time joining keys).
    private mutating func add(_ node: Node, atText text: String) {
        guard !node.isEmpty else { return }
        if node.isLeaf {
            append(text, TreeRows.leaf, node.jsonString(format: .export))
            return
        }
        if let priority = node.priority { append(text, TreeRows.priority, TreeRows.encode(priority)) }
        for (key, child) in node.children { add(child, atText: text + "/" + key.stringValue) }
    }

    /// Adds the rows an ancestor of a changed path keeps: its leaf, when it is a leaf (a removal
    /// below a leaf changes nothing), or its priority, when it has children and one.
    mutating func addAncestor(of root: Node, at path: TreePath) {
        let node = root.child(at: path)
        if node.isEmpty { return }
        if node.isLeaf {
            append(TreeRows.text(path), TreeRows.leaf, node.jsonString(format: .export))
        } else if let priority = node.priority {
            append(TreeRows.text(path), TreeRows.priority, TreeRows.encode(priority))
        }
    }

    /// Adds the priority row of a node with children, its path given as text.
    mutating func addPriority(_ priority: Priority, atText path: String) {
        append(path, TreeRows.priority, TreeRows.encode(priority))
    }

    /// The priority a `.priority` write's value sets (`nil`: none).
    static func priority(of value: Node) -> Priority? {
        switch value.leafValue {
        case .number(let number)?: .number(number)
        case .string(let string)?: .string(string)
        default: nil
        }
    }

    /// A stored leaf row's value.
    static func decodeLeaf(_ value: String, at path: String) throws(PostgresStoreError) -> Node {
        do { return try Node(jsonString: value) } catch {
            throw PostgresStoreError("The stored value at \(path.isEmpty ? "/" : path) is damaged.", underlying: error)
        }
    }

    private mutating func append(_ path: String, _ kind: Int16, _ value: String) {
        paths.append(path)
        kinds.append(kind)
        values.append(value)
    }

    static func encode(_ priority: Priority) -> String {
        switch priority {
        case .number(let number): "n:\(number)"
        case .string(let string): "s:\(string)"
        }
    }

    static func decodePriority(_ text: String) throws(PostgresStoreError) -> Priority {
        if text.hasPrefix("s:") { return .string(String(text.dropFirst(2))) }
        if text.hasPrefix("n:"), let number = Double(text.dropFirst(2)) { return .number(number) }
        throw PostgresStoreError("A stored priority is damaged: \(text.prefix(40)).")
    }

    /// Builds a tree from rows in any order.
    struct Builder {
        private var root = Node.empty
        private var priorities: [(TreePath, Priority)] = []

        mutating func add(path: String, kind: Int16, value: String) throws(PostgresStoreError) {
            let treePath = TreePath(unchecked: path.isEmpty ? "/" : path)
            switch kind {
            case TreeRows.leaf:
                let node: Node
                do { node = try Node(jsonString: value) } catch {
                    throw PostgresStoreError("The stored value at \(path.isEmpty ? "/" : path) is damaged.", underlying: error)
                }
                root = root.updatingChild(at: treePath, to: node)
            case TreeRows.priority:
                priorities.append((treePath, try TreeRows.decodePriority(value)))
            default:
                throw PostgresStoreError("A stored row at \(path) has an unknown kind \(kind).")
            }
        }

        /// The tree, priorities of nodes with children applied.
        func finish() -> Node {
            var tree = root
            for (path, priority) in priorities {
                let node = tree.child(at: path)
                if !node.isEmpty { tree = tree.updatingChild(at: path, to: node.withPriority(priority)) }
            }
            return tree
        }
    }
}
