import CoreTree

/// A value met while evaluating a rule.
enum RuleValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    /// An object: `auth`, a value inside it with children, or `val()` of a node with children.
    case object(Node)
    case snapshot(RuleSnapshot)

    /// The value a node holds: null when empty, its leaf, or the node as an object.
    init(_ node: Node) {
        switch node.leafValue {
        case .bool(let value)?: self = .bool(value)
        case .number(let value)?: self = .number(value)
        case .string(let value)?: self = .string(value)
        case nil: self = node.isEmpty ? .null : .object(node)
        }
    }

    /// A number as JavaScript writes it when it joins a string (`'' + 1` is `"1"`, `1/0 + ''` is
    /// `"NaN"` in Firebase's rules).
    static func format(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        return NumberFormatting.json(number)
    }

    /// What the value is, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .object: "an object"
        case .snapshot: "a snapshot"
        }
    }

    /// Strict equality (`==` and `===` alike: no coercion between types).
    func isEqual(to other: RuleValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case let (.bool(left), .bool(right)): left == right
        case let (.number(left), .number(right)): left == right
        case let (.string(left), .string(right)): left == right
        case let (.object(left), .object(right)): left == right
        default: false
        }
    }
}

/// A location in a tree (the data before or after a write), as `root`, `data` and `newData` see it.
struct RuleSnapshot: Sendable {
    let tree: Node
    let path: TreePath
    /// The node at `path` in `tree`.
    let node: Node
    /// Whether `tree` is the data after a write (`newData` and what is reached from it).
    let isNew: Bool
}
