package import CoreTree

/// Turns server-cache nodes into rows (one per leaf, priorities as `.priority` leaves) and back.
package enum CacheRows {
    /// Calls `body` with the path (relative to `node`) and value of every leaf, and of every
    /// priority as a leaf at `.priority`.
    static func forEachLeaf(of node: Node, at path: TreePath = .root, _ body: (TreePath, Node) -> Void) {
        if let priority = node.priority { body(path.child(.priority), priority.node) }
        if node.isLeaf {
            body(path, node.withPriority(nil))
            return
        }
        for (key, child) in node.children { forEachLeaf(of: child, at: path.child(key), body) }
    }

    /// The bytes stored for a leaf: its JSON, without its priority (a priority is a row of its
    /// own, see ``forEachLeaf(of:at:_:)``).
    ///
    /// Strings with nothing to escape, booleans and numbers are written directly (most leaves);
    /// strings that need escapes go through the JSON writer, so the bytes are the same.
    package static func encodeLeaf(_ leaf: Node) -> [UInt8] {
        switch leaf.leafValue {
        case .string(let text)?:
            var bytes: [UInt8] = []
            // Room for the row's checksum too, which a bulk writer appends in place.
            bytes.reserveCapacity(text.utf8.count + 2 + ChecksummedStore.overhead)
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                // Control characters, quotes and backslashes need escapes.
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return leaf.jsonBytes(format: .plain) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
            return bytes
        case .bool(let value)?:
            return Array((value ? "true" : "false").utf8)
        case .number(let number)?:
            var bytes: [UInt8] = []
            bytes.reserveCapacity(24 + ChecksummedStore.overhead)
            NumberFormatting.appendJSON(number, to: &bytes)
            return bytes
        default:
            return leaf.jsonBytes(format: .plain)
        }
    }

    /// The bytes stored for an overflow row: the subtree's JSON with priorities.
    package static func encodeSubtree(_ node: Node) -> [UInt8] { Array(node.jsonString(format: .export).utf8) }

    /// The node a cache row holds (a leaf's JSON, or an overflow row's subtree).
    ///
    /// - Throws: ``StorageError`` `invalidRecord` when the row is not valid JSON.
    package static func decode(_ bytes: [UInt8]) throws -> Node {
        do {
            return try Node(json: bytes)
        } catch {
            throw StorageError(
                .invalidRecord,
                "a server cache row is damaged (it is not valid JSON); the data is read from the server instead. If this keeps happening, move the persistence directory aside.",
                underlying: error)
        }
    }

    /// Rebuilds a node from rows, collected in any order.
    struct Builder {
        private var node = Node.empty
        private var priorities: [(TreePath, Node)] = []

        /// Adds a leaf row at `path`.
        mutating func addLeaf(_ value: Node, at path: TreePath) {
            if path.lastKey?.isPriorityKey == true {
                priorities.append((path, value))
            } else {
                node = node.updatingChild(at: path, to: value)
            }
        }

        /// Adds an overflow row holding `subtree`'s leaves below `path`.
        mutating func addSubtree(_ subtree: Node, at path: TreePath) {
            CacheRows.forEachLeaf(of: subtree) { relative, leaf in addLeaf(leaf, at: path.appending(relative)) }
        }

        /// The node, with priorities applied once every child is in place.
        func build() -> Node {
            var result = node
            for (path, priority) in priorities.sorted(by: { $0.0.depth > $1.0.depth }) {
                result = result.updatingChild(at: path, to: priority)
            }
            return result
        }
    }
}
