public import CoreTree

/// The rules of one location of a rules document, and the locations below it.
final class RuleLocation: Sendable {
    let read: RuleExpression?
    let write: RuleExpression?
    let validate: RuleExpression?
    /// The children (or `.value`) the location's `.indexOn` names.
    let indexOn: [String]
    let children: [String: RuleLocation]
    /// The `$name` child, matching every key no named child matches.
    let wildcard: (name: String, location: RuleLocation)?

    init(read: RuleExpression?, write: RuleExpression?, validate: RuleExpression?, indexOn: [String],
         children: [String: RuleLocation], wildcard: (name: String, location: RuleLocation)?) {
        self.read = read
        self.write = write
        self.validate = validate
        self.indexOn = indexOn
        self.children = children
        self.wildcard = wildcard
    }

    /// The location for child `key` on the way down, with the wildcard it binds (if any) added
    /// to `wildcards`; nil when no rule covers the key.
    func descend(_ key: ChildKey, binding wildcards: inout WildcardValues) -> RuleLocation? {
        guard let next = child(key.stringValue) else { return nil }
        if let name = next.binding { wildcards.append((name, key.stringValue)) }
        return next.location
    }

    /// The location for child `key`, and the wildcard it binds, if any.
    func child(_ key: String) -> (location: RuleLocation, binding: String?)? {
        if let named = children[key] { return (named, nil) }
        if let wildcard { return (wildcard.location, wildcard.name) }
        return nil
    }
}

/// A compiled rules document: every expression parsed and type-checked once, ready to judge reads
/// and writes.
///
/// Semantics (Firebase's): `.read` and `.write` grant when any rule on the way from the root to
/// the location grants (deeper rules cannot take a grant back); `.validate` does not cascade and
/// must pass at every location of the new data it covers; rules are not filters; a runtime error
/// makes its rule false.
public struct RuleSet: Sendable {
    /// The document as it was installed (comments and layout kept).
    public let source: String
    let root: RuleLocation
    private let document: RulesText

    /// Parses and compiles a rules document (`{"rules": {...}}`, in the JSON the Firebase
    /// console accepts).
    ///
    /// - Throws: ``RulesError`` with the line and column of the first problem.
    public init(parsing source: String) throws(RulesError) {
        self.source = source
        document = try RulesTextParser.parse(source)
        guard case .object(let members, _) = document else {
            throw RulesError("a rules document is an object: {\"rules\": {...}}", line: document.location.line, column: document.location.column)
        }
        guard let rules = members.first(where: { $0.key == "rules" }) else {
            throw RulesError("a rules document needs a \"rules\" key: {\"rules\": {...}}", line: 1, column: 1)
        }
        if let other = members.first(where: { $0.key != "rules" }) {
            throw RulesError("unknown key \"\(other.key)\" beside \"rules\"", line: other.keyAt.line, column: other.keyAt.column)
        }
        root = try RuleCompiler.location(rules.value, wildcards: [], depth: 0)
    }

    /// Rules that grant `read` and `write` everywhere, or nowhere.
    public static func everywhere(read: Bool, write: Bool) -> RuleSet {
        // A fixed document that always parses.
        try! RuleSet(parsing: "{\"rules\": {\".read\": \(read), \".write\": \(write)}}")
    }

    /// The document as strict JSON (comments dropped), for `?format=strict`.
    public var strictJSON: String { document.strictJSON }

    /// The children `.indexOn` names at `path` (`.value` for an index on values).
    public func indexOn(at path: TreePath) -> [String] {
        var location = root
        for key in path.keys {
            guard let next = location.child(key.stringValue) else { return [] }
            location = next.location
        }
        return location.indexOn
    }

    // MARK: - Reads

    /// Whether the caller may read `path` (with `query`), given the data `root`.
    ///
    /// - Parameters:
    ///   - auth: the `auth` variable (`nil` when unauthenticated).
    ///   - now: the server's time in milliseconds since 1970.
    ///   - access: where to record the locations whose data the rules read, if anywhere.
    public func canRead(_ path: TreePath, root data: Node, auth: Node?, now: Double, query: RuleQuery = .plain,
                        access: RuleDataAccess? = nil) -> Bool {
        var location = self.root
        var wildcards: WildcardValues = []
        var levelPath = TreePath.root
        var node = data
        while true {
            if let read = location.read {
                let scope = RuleScope(auth: auth, now: now, root: data, newRoot: nil, path: levelPath, wildcards: wildcards,
                                      query: query, dataNode: node, access: access)
                if RuleEvaluator(scope: scope).grants(read) { return true }
            }
            guard levelPath.depth < path.depth else { return false }
            let key = path.keys[levelPath.depth]
            guard let next = location.descend(key, binding: &wildcards) else { return false }
            location = next
            levelPath = levelPath.child(key)
            node = node.immediateChild(key)
        }
    }

    // MARK: - Writes

    /// Whether a write that changes the locations `paths` may turn `before` into `after` (the
    /// whole tree after the write; a multi-path update is judged as a whole).
    ///
    /// Each path needs a `.write` grant at it or above, and every `.validate` rule on the way to
    /// it and in the new data below it must pass where the new data exists. `access`, when given,
    /// records the locations whose data the rules read (the new data below each written path is
    /// read whole by its `.validate` rules and not recorded).
    public func canWrite(_ paths: [TreePath], before: Node, after: Node, auth: Node?, now: Double, access: RuleDataAccess? = nil) -> Bool {
        // Ancestors shared by several paths have their .validate run once.
        var validatedAbove: Set<TreePath>? = paths.count > 1 ? [] : nil
        for path in paths {
            guard judgeWrite(path, before: before, after: after, auth: auth, now: now, validatedAbove: &validatedAbove, access: access) else {
                return false
            }
        }
        return true
    }

    private func judgeWrite(_ path: TreePath, before: Node, after: Node, auth: Node?, now: Double,
                            validatedAbove: inout Set<TreePath>?, access: RuleDataAccess?) -> Bool {
        var location = self.root
        var wildcards: WildcardValues = []
        var granted = false
        var levelPath = TreePath.root
        var oldNode = before, newNode = after
        while true {
            if levelPath.depth == path.depth {
                if !granted, let write = location.write {
                    let scope = RuleScope(auth: auth, now: now, root: before, newRoot: after, path: levelPath, wildcards: wildcards,
                                          query: .plain, dataNode: oldNode, newDataNode: newNode, access: access)
                    granted = RuleEvaluator(scope: scope).grants(write)
                }
                return granted && validateSubtree(location, path: levelPath, wildcards: wildcards, oldNode: oldNode, newNode: newNode,
                                                  before: before, after: after, auth: auth, now: now, access: access)
            }
            if location.validate != nil { access?.note(levelPath, isNew: true) }
            let needsValidate = location.validate != nil && !newNode.isEmpty && validatedAbove?.contains(levelPath) != true
            if (!granted && location.write != nil) || needsValidate {
                let evaluator = RuleEvaluator(scope: RuleScope(auth: auth, now: now, root: before, newRoot: after, path: levelPath,
                                                               wildcards: wildcards, query: .plain, dataNode: oldNode, newDataNode: newNode,
                                                               access: access))
                if !granted, let write = location.write, evaluator.grants(write) { granted = true }
                if needsValidate, let validate = location.validate {
                    guard evaluator.grants(validate) else { return false }
                    validatedAbove?.insert(levelPath)
                }
            }
            let key = path.keys[levelPath.depth]
            guard let next = location.descend(key, binding: &wildcards) else { return granted }
            location = next
            levelPath = levelPath.child(key)
            oldNode = oldNode.immediateChild(key)
            newNode = newNode.immediateChild(key)
        }
    }

    /// Runs the `.validate` rules of `location` and of every rule location below it that the new
    /// data reaches.
    private func validateSubtree(_ location: RuleLocation, path: TreePath, wildcards: WildcardValues, oldNode: Node, newNode: Node,
                                 before: Node, after: Node, auth: Node?, now: Double, access: RuleDataAccess?) -> Bool {
        guard !newNode.isEmpty else { return true }
        if let validate = location.validate {
            let scope = RuleScope(auth: auth, now: now, root: before, newRoot: after, path: path, wildcards: wildcards, query: .plain,
                                  dataNode: oldNode, newDataNode: newNode, access: access)
            guard RuleEvaluator(scope: scope).grants(validate) else { return false }
        }
        guard !location.children.isEmpty || location.wildcard != nil else { return true }
        for (key, child) in newNode.children {
            var inner = wildcards
            guard let next = location.descend(key, binding: &inner) else { continue }
            guard validateSubtree(next, path: path.child(key), wildcards: inner, oldNode: oldNode.immediateChild(key),
                                  newNode: child, before: before, after: after, auth: auth, now: now, access: access) else {
                return false
            }
        }
        return true
    }
}
