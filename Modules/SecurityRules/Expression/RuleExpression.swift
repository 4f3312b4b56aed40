/// Which rule an expression belongs to: it decides the variables in scope (`newData` only in
/// `.write` and `.validate`, `query` only in `.read`).
public enum RuleKind: String, Sendable, CaseIterable {
    /// `.read`: may the caller read the location.
    case read = ".read"
    /// `.write`: may the caller write the location.
    case write = ".write"
    /// `.validate`: is the new data acceptable.
    case validate = ".validate"
}

/// A variable every rule can name (wildcards aside).
enum RuleVariable: String, Sendable {
    case auth, root, data, newData, now, query
}

/// A property of `query` in a `.read` rule.
enum QueryProperty: String, Sendable, CaseIterable {
    case orderByKey, orderByValue, orderByPriority, orderByChild, startAt, endAt, equalTo, limitToFirst, limitToLast
}

/// A method of a snapshot (`root`, `data`, `newData`, and what `child()` and `parent()` return).
enum SnapshotMethod: String, Sendable {
    case val, child, parent, hasChild, hasChildren, exists, getPriority, isNumber, isString, isBoolean
}

/// A method of a string.
enum StringMethod: String, Sendable {
    case contains, beginsWith, endsWith, replace, toLowerCase, toUpperCase, matches
}

/// An arithmetic, comparison or equality operator.
enum BinaryOperator: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%"
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case equal = "==", notEqual = "!="
}

/// A checked expression tree, ready to evaluate. Built by ``RuleParser``; every member and method
/// is resolved at parse time, so evaluation never looks a name up.
indirect enum RuleNode: Sendable {
    case literal(RuleValue)
    case variable(RuleVariable)
    case wildcard(String)
    /// `target.name` or `target['name']` on `auth` or a value inside it.
    case member(RuleNode, String)
    /// `target[expression]` on `auth` or a value inside it.
    case computedMember(RuleNode, RuleNode)
    case query(QueryProperty)
    case length(RuleNode)
    case snapshot(RuleNode, SnapshotMethod, [RuleNode])
    /// `hasChildren()` (nil) or `hasChildren([names ...])`.
    case hasChildren(RuleNode, [RuleNode]?)
    case string(RuleNode, StringMethod, [RuleNode])
    case matches(RuleNode, RuleRegex)
    case not(RuleNode)
    case negate(RuleNode)
    case binary(BinaryOperator, RuleNode, RuleNode)
    case and(RuleNode, RuleNode)
    case or(RuleNode, RuleNode)
    case conditional(RuleNode, RuleNode, RuleNode)
    /// A regular expression literal; only the argument of `matches` holds one.
    case regexLiteral(RuleRegex)
    /// An array literal; only the argument of `hasChildren` holds one.
    case array([RuleNode])
}

/// One compiled rule expression (the value of a `.read`, `.write` or `.validate` key).
public struct RuleExpression: Sendable, CustomStringConvertible {
    /// The expression as written.
    public let source: String
    /// The rule it belongs to.
    public let kind: RuleKind
    let root: RuleNode

    /// Parses and type-checks `source` for a rule of `kind`, with the `$wildcards` of the rule's
    /// location (names with their `$`) in scope.
    ///
    /// - Throws: ``RulesError`` located in `source` (line 1) for a syntax or type error.
    public init(_ source: String, kind: RuleKind, wildcards: Set<String> = []) throws(RulesError) {
        self.source = source
        self.kind = kind
        root = try RuleParser.parse(source, kind: kind, wildcards: wildcards)
    }

    /// A constant rule (`true` or `false` written as a JSON boolean).
    init(constant: Bool, kind: RuleKind) {
        source = constant ? "true" : "false"
        self.kind = kind
        root = .literal(.bool(constant))
    }

    /// The expression as written.
    public var description: String { source }

    /// Whether the expression is the constant `value`.
    var isConstant: Bool? {
        if case .literal(.bool(let value)) = root { return value }
        return nil
    }
}
