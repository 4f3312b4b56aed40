import CoreTree

/// The `$wildcard` values bound on the way to a location, outermost first: a short list, cheaper
/// to extend per level than a dictionary.
typealias WildcardValues = [(name: String, value: String)]

/// Everything a rule can see while it is evaluated at one location. A class: the evaluator passes
/// one reference around instead of copying the trees and tables it holds.
final class RuleScope {
    /// The `auth` variable: nil when unauthenticated.
    let auth: Node?
    let now: Double
    /// `root`: the data before the operation.
    let root: RuleSnapshot
    /// `data`: the rule's location before the operation.
    let data: RuleSnapshot
    /// `newData`: the location as it would be after a write (`data` for reads).
    let newData: RuleSnapshot
    /// The `$wildcard` values of the location (names with their `$`).
    let wildcards: WildcardValues
    let query: RuleQuery
    /// Where the locations read are recorded, if anywhere.
    let access: RuleDataAccess?

    /// A scope at `path`; `dataNode` and `newDataNode`, when the caller has them, save walking
    /// the trees from their roots.
    init(auth: Node?, now: Double, root: Node, newRoot: Node?, path: TreePath, wildcards: WildcardValues, query: RuleQuery,
         dataNode: Node? = nil, newDataNode: Node? = nil, access: RuleDataAccess? = nil) {
        self.access = access
        self.auth = auth
        self.now = now
        self.root = RuleSnapshot(tree: root, path: .root, node: root, isNew: false)
        data = RuleSnapshot(tree: root, path: path, node: dataNode ?? root.child(at: path), isNew: false)
        if let newRoot {
            newData = RuleSnapshot(tree: newRoot, path: path, node: newDataNode ?? newRoot.child(at: path), isNew: true)
        } else {
            newData = data
        }
        self.wildcards = wildcards
        self.query = query
    }
}

/// Evaluates a checked expression tree. A runtime error (a method on null, arithmetic on a string,
/// a path that is not a string ...) makes the whole rule false, even under `||`, as in Firebase.
struct RuleEvaluator {
    let scope: RuleScope

    /// Whether `expression` grants: it evaluates to `true` without a runtime error.
    func grants(_ expression: RuleExpression) -> Bool {
        if let constant = expression.isConstant { return constant }
        guard case .bool(true)? = try? value(expression.root) else { return false }
        return true
    }

    /// The value of `expression`, or the runtime error it raises (for tests and tools).
    func outcome(_ expression: RuleExpression) -> Result<RuleValue, RuleEvaluationError> {
        do { return .success(try value(expression.root)) } catch { return .failure(error) }
    }

    private func fail(_ message: String) -> RuleEvaluationError { RuleEvaluationError(message) }

    func value(_ node: RuleNode) throws(RuleEvaluationError) -> RuleValue {
        switch node {
        case .literal(let value):
            return value
        case .variable(let variable):
            return variableValue(variable)
        case .wildcard(let name):
            guard let value = scope.wildcards.last(where: { $0.name == name })?.value else { throw fail("\(name) has no value here") }
            return .string(value)
        case .member(let target, let name):
            return try member(try value(target), name)
        case .computedMember(let target, let key):
            let object = try value(target)
            switch try value(key) {
            case .string(let name): return try member(object, name)
            case .number(let number): return try member(object, RuleValue.format(number))
            case let other: throw fail("a member name must be a string, not \(other.typeName)")
            }
        case .query(let property):
            return scope.query.value(of: property)
        case .length(let target):
            guard case .string(let text) = try value(target) else { throw fail("length is a property of strings") }
            return .number(Double(text.utf16.count))
        case .snapshot(let target, let method, let arguments):
            return try snapshotMethod(try snapshot(target), method, arguments)
        case .hasChildren(let target, let names):
            let target = try snapshot(target)
            let node = target.node
            guard let names else {
                scope.access?.note(target.path, isNew: target.isNew)
                return .bool(!node.isLeaf && !node.isEmpty)
            }
            for name in names {
                let relative = try path(try value(name))
                scope.access?.note(target.path.appending(relative), isNew: target.isNew)
                guard node.child(at: relative).isEmpty == false else { return .bool(false) }
            }
            return .bool(true)
        case .string(let target, let method, let arguments):
            guard case .string(let text) = try value(target) else { throw fail("\(method.rawValue)() is a method of strings") }
            let strings = try arguments.map { (argument) throws(RuleEvaluationError) -> String in
                guard case .string(let string) = try value(argument) else {
                    throw fail("\(method.rawValue)() takes strings")
                }
                return string
            }
            switch method {
            case .contains: return .bool(strings[0].isEmpty || text.contains(strings[0]))
            case .beginsWith: return .bool(text.hasPrefix(strings[0]))
            case .endsWith: return .bool(text.hasSuffix(strings[0]))
            case .replace: return .string(strings[0].isEmpty ? text : text.replacing(strings[0], with: strings[1]))
            case .toLowerCase: return .string(text.lowercased())
            case .toUpperCase: return .string(text.uppercased())
            case .matches: throw fail("matches() takes a regular expression")
            }
        case .matches(let target, let regex):
            guard case .string(let text) = try value(target) else { throw fail("matches() is a method of strings") }
            return .bool(regex.matches(text))
        case .not(let operand):
            return .bool(!(try boolean(operand, "!")))
        case .negate(let operand):
            guard case .number(let number) = try value(operand) else { throw fail("- needs a number") }
            return .number(-number)
        case .binary:
            return try binaryChain(node)
        case .and, .or:
            return .bool(try logicalChain(node))
        case .conditional(let condition, let whenTrue, let whenFalse):
            return try value(try boolean(condition, "?:") ? whenTrue : whenFalse)
        case .regexLiteral:
            throw fail("a regular expression is only the argument of matches()")
        case .array:
            throw fail("an array is only the argument of hasChildren()")
        }
    }

    private func variableValue(_ variable: RuleVariable) -> RuleValue {
        switch variable {
        case .auth: scope.auth.map { RuleValue.object($0) } ?? .null
        case .root: .snapshot(scope.root)
        case .data: .snapshot(scope.data)
        case .newData: .snapshot(scope.newData)
        case .now: .number(scope.now)
        case .query: .null  // only its properties are ever read (checked at parse time)
        }
    }

    /// A member of an object (`auth.uid`); a member of null is null (`auth.uid` when signed out).
    private func member(_ object: RuleValue, _ name: String) throws(RuleEvaluationError) -> RuleValue {
        switch object {
        case .object(let node): return RuleValue(node.immediateChild(ChildKey(name)))
        case .null: return .null
        default: throw fail("\(object.typeName) has no member \(name)")
        }
    }

    // Left-associative chains (`a || b || c ...`, `1 + 2 + 3 ...`, up to the 2,000-token limit)
    // are trees as deep as they are long: they are walked down their left spine in a loop, so
    // evaluating one takes the same stack whatever its length (by recursion, a 990-term chain
    // overflowed a thread's stack under ThreadSanitizer's larger frames).

    /// A chain of binary operations, evaluated left to right.
    private func binaryChain(_ node: RuleNode) throws(RuleEvaluationError) -> RuleValue {
        var steps: [(BinaryOperator, RuleNode)] = []
        var leftmost = node
        while case .binary(let operation, let left, let right) = leftmost {
            steps.append((operation, right))
            leftmost = left
        }
        var result = try value(leftmost)
        for (operation, right) in steps.reversed() {
            result = try binary(operation, result, try value(right))
        }
        return result
    }

    /// A chain of `&&` (or of `||`), evaluated left to right, stopping at the first operand that
    /// decides it.
    private func logicalChain(_ node: RuleNode) throws(RuleEvaluationError) -> Bool {
        let isAnd: Bool
        if case .and = node { isAnd = true } else { isAnd = false }
        let symbol = isAnd ? "&&" : "||"
        var rights: [RuleNode] = []
        var leftmost = node
        while true {
            if isAnd, case .and(let left, let right) = leftmost {
                rights.append(right)
                leftmost = left
            } else if !isAnd, case .or(let left, let right) = leftmost {
                rights.append(right)
                leftmost = left
            } else {
                break
            }
        }
        var result = try boolean(leftmost, symbol)
        for right in rights.reversed() {
            if result != isAnd { return result }
            result = try boolean(right, symbol)
        }
        return result
    }

    private func boolean(_ node: RuleNode, _ operation: String) throws(RuleEvaluationError) -> Bool {
        guard case .bool(let value) = try value(node) else { throw fail("\(operation) needs booleans") }
        return value
    }

    private func snapshot(_ node: RuleNode) throws(RuleEvaluationError) -> RuleSnapshot {
        guard case .snapshot(let snapshot) = try value(node) else { throw fail("not a snapshot") }
        return snapshot
    }

    /// A child path written in a rule: a string of `/`-separated keys. Keys are not validated:
    /// Firebase reads `child('banned/bob@example.com')` as a child that does not exist (recorded).
    private func path(_ value: RuleValue) throws(RuleEvaluationError) -> TreePath {
        guard case .string(let text) = value else { throw fail("a child path must be a string, not \(value.typeName)") }
        return TreePath(unchecked: text)
    }

    private func snapshotMethod(_ snapshot: RuleSnapshot, _ method: SnapshotMethod, _ arguments: [RuleNode]) throws(RuleEvaluationError) -> RuleValue {
        switch method {
        case .child, .parent, .hasChild: break
        default: scope.access?.note(snapshot.path, isNew: snapshot.isNew)
        }
        switch method {
        case .child:
            let relative = try path(try value(arguments[0]))
            return .snapshot(RuleSnapshot(tree: snapshot.tree, path: snapshot.path.appending(relative), node: snapshot.node.child(at: relative),
                                          isNew: snapshot.isNew))
        case .parent:
            guard let parent = snapshot.path.parent else { throw fail("the root has no parent") }
            return .snapshot(RuleSnapshot(tree: snapshot.tree, path: parent, node: snapshot.tree.child(at: parent), isNew: snapshot.isNew))
        case .hasChild:
            let relative = try path(try value(arguments[0]))
            scope.access?.note(snapshot.path.appending(relative), isNew: snapshot.isNew)
            return .bool(!snapshot.node.child(at: relative).isEmpty)
        case .hasChildren:
            let node = snapshot.node
            return .bool(!node.isLeaf && !node.isEmpty)
        case .exists:
            return .bool(!snapshot.node.isEmpty)
        case .val:
            return RuleValue(snapshot.node)
        case .getPriority:
            switch snapshot.node.priority {
            case .number(let number)?: return .number(number)
            case .string(let string)?: return .string(string)
            case nil: return .null
            }
        case .isNumber, .isString, .isBoolean:
            switch (method, snapshot.node.leafValue) {
            case (.isNumber, .number?), (.isString, .string?), (.isBoolean, .bool?): return .bool(true)
            default: return .bool(false)
            }
        }
    }

    private func binary(_ operation: BinaryOperator, _ left: RuleValue, _ right: RuleValue) throws(RuleEvaluationError) -> RuleValue {
        switch operation {
        case .equal: return .bool(left.isEqual(to: right))
        case .notEqual: return .bool(!left.isEqual(to: right))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (left, right) {
            case let (.number(a), .number(b)):
                guard !a.isNaN, !b.isNaN else { return .bool(false) }
                order = a < b ? -1 : (a > b ? 1 : 0)
            case let (.string(a), .string(b)):
                order = a.utf16.lexicographicallyPrecedes(b.utf16) ? -1 : (a.utf16.elementsEqual(b.utf16) ? 0 : 1)
            default:
                throw fail("\(operation.rawValue) compares two numbers or two strings, not \(left.typeName) and \(right.typeName)")
            }
            switch operation {
            case .less: return .bool(order < 0)
            case .lessOrEqual: return .bool(order <= 0)
            case .greater: return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        case .add:
            switch (left, right) {
            case let (.number(a), .number(b)): return .number(a + b)
            case let (.string(a), .string(b)): return .string(a + b)
            case let (.string(a), .number(b)): return .string(a + RuleValue.format(b))
            case let (.number(a), .string(b)): return .string(RuleValue.format(a) + b)
            default: throw fail("+ adds numbers or joins strings, not \(left.typeName) and \(right.typeName)")
            }
        case .subtract, .multiply, .divide, .remainder:
            guard case .number(let a) = left, case .number(let b) = right else {
                throw fail("\(operation.rawValue) needs numbers, not \(left.typeName) and \(right.typeName)")
            }
            switch operation {
            case .subtract: return .number(a - b)
            case .multiply: return .number(a * b)
            // Firebase answers NaN for a division by zero (recorded: `(1/0 + '') == 'NaN'`).
            case .divide: return .number(b == 0 ? .nan : a / b)
            default: return .number(a.truncatingRemainder(dividingBy: b))
            }
        }
    }
}
