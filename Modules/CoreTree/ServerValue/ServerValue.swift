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

    // MARK: - A placeholder as a priority

    /// `node` with a server value as its priority, in the wire's shape until it is resolved: a
    /// children node whose `.priority` child is the placeholder and whose `.value` child is a leaf
    /// (a children node keeps its children beside `.priority`). ``resolve(_:existing:serverTime:at:)``
    /// turns it into `node` with the resolved priority.
    public static func carrying(_ node: Node, priority placeholder: Node) -> Node {
        let body = node.withPriority(nil)
        if body.isLeaf {
            return Node(children: [(key: ChildKey.priority, value: placeholder), (key: ChildKey.value, value: body)])
        }
        return Node(children: Array(body.children.map { (key: $0.key, value: $0.value) }) + [(key: ChildKey.priority, value: placeholder)])
    }

    /// The placeholder a node carries as its priority (see ``carrying(_:priority:)``), or nil.
    public static func placeholderPriority(of node: Node) -> Node? {
        guard let child = node.children[ChildKey.priority], isPlaceholder(child) else { return nil }
        return child
    }

    /// What a node carrying a placeholder priority holds besides it: its `.value`, or its other children.
    static func body(ofCarrier node: Node) -> Node {
        if let value = node.children[ChildKey.value] { return value }
        return Node(children: node.children.lazy.filter { $0.key != ChildKey.priority }.map { (key: $0.key, value: $0.value) })
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
        if let placeholder = placeholderPriority(of: node) {
            let resolvedBody = try resolve(body(ofCarrier: node), existing: existing, serverTime: serverTime, at: path)
            let resolvedPriority = try resolvePlaceholder(
                placeholder, existing: existing.priority?.node ?? .empty, serverTime: serverTime, at: path.child(ChildKey.priority))
            switch resolvedPriority.leafValue {
            case .number(let number)?: return resolvedBody.withPriority(.number(number))
            case .string(let string)?: return resolvedBody.withPriority(.string(string))
            default: return resolvedBody
            }
        }
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
