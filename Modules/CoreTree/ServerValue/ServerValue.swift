/// Server-value placeholders (`{".sv": "timestamp"}`, `{".sv": {"increment": n}}`) and their
/// resolution against the server's clock and the data already stored.
///
/// A placeholder is a children node whose only child is `.sv`. Clients keep placeholders
/// unresolved in their write queue and resolve a local estimate for listeners; the server
/// resolves them for real, atomically with the write.
public enum ServerValue {
    /// The placeholder for the server's current time in milliseconds since the Unix epoch.
    public static let timestamp = Node(children: [(key: ChildKey.serverValue, value: Node(.string("timestamp")))])

    /// The placeholder that adds `delta` to the number stored at the location (or sets `delta`
    /// when the location holds no number).
    public static func increment(_ delta: Double) -> Node {
        Node(children: [
            (key: ChildKey.serverValue, value: Node(children: [(key: ChildKey("increment"), value: Node(.number(delta)))]))
        ])
    }

    /// Whether `node` is a server-value placeholder (a node whose only child is `.sv`).
    @inlinable
    public static func isPlaceholder(_ node: Node) -> Bool {
        let children = node.children
        return children.count == 1 && children.first!.key == ChildKey.serverValue
    }

    /// Whether `node` or anything below it is a placeholder.
    public static func containsPlaceholder(_ node: Node) -> Bool {
        if isPlaceholder(node) { return true }
        return !node.children.forEachUntil { _, child in !containsPlaceholder(child) }
    }

    /// Checks that a placeholder is one this server understands.
    ///
    /// - Throws: ``CoreTreeError`` with code `invalidValue` for an unknown `.sv` form.
    public static func validatePlaceholder(_ node: Node, at path: TreePath) throws(CoreTreeError) {
        let value = node.immediateChild(.serverValue)
        if value.leafValue == .string("timestamp") { return }
        if value.childCount == 1, case .number(let delta)? = value.immediateChild("increment").leafValue, delta.isFinite {
            return
        }
        throw CoreTreeError(
            .invalidValue,
            "Unknown server value at \"\(path.wireForm)\": \(value); use {\".sv\": \"timestamp\"} or {\".sv\": {\"increment\": <number>}}.")
    }

    /// Replaces every placeholder in `node` by its value.
    ///
    /// - Parameters:
    ///   - node: the data being written, possibly holding placeholders.
    ///   - existing: the data currently stored at the same location (for increments).
    ///   - serverTime: the server's time in milliseconds since the Unix epoch.
    ///   - path: where `node` is written, for the error message.
    /// - Returns: `node` with placeholders resolved; unknown placeholders are left as they are
    ///   (validation rejects them before a write gets here).
    /// - Throws: ``CoreTreeError`` with code `invalidValue` when an increment's sum is not a
    ///   finite number (`1e308 + 1e308`): no JSON can hold it, so the write must not happen.
    public static func resolve(_ node: Node, existing: Node, serverTime: Int64, at path: TreePath = .root) throws(CoreTreeError) -> Node {
        if isPlaceholder(node) {
            return try resolvePlaceholder(node, existing: existing, serverTime: serverTime, at: path)
        }
        if node.isLeaf || node.isEmpty || !containsPlaceholder(node) { return node }
        var result = node
        for (key, child) in node.children where containsPlaceholder(child) {
            let resolved = try resolve(child, existing: existing.immediateChild(key), serverTime: serverTime, at: path.child(key))
            result = result.updatingImmediateChild(key, to: resolved)
        }
        return result
    }

    private static func resolvePlaceholder(_ node: Node, existing: Node, serverTime: Int64, at path: TreePath) throws(CoreTreeError) -> Node {
        // A priority written beside the placeholder (`{".value": {".sv": ...}, ".priority": 5}`)
        // stays with the resolved value.
        let value = node.immediateChild(.serverValue)
        if value.leafValue == .string("timestamp") {
            return Node(.number(Double(serverTime)), priority: node.priority)
        }
        if case .number(let delta)? = value.immediateChild("increment").leafValue {
            guard case .number(let current)? = existing.leafValue else { return Node(.number(delta), priority: node.priority) }
            let sum = current + delta
            guard sum.isFinite else {
                throw CoreTreeError(
                    .invalidValue,
                    "The increment at \"\(path.wireForm)\" overflows: \(current) + \(delta) is not a finite number; nothing was written.")
            }
            return Node(.number(sum), priority: node.priority)
        }
        return node
    }
}
