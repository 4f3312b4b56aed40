/// What the parser knows of an expression's type before evaluation. Firebase rejects a rules
/// document whose expressions misuse a type it can see (a snapshot compared with null, a method a
/// type does not have, a rule that is not boolean); what it cannot see fails at run time.
enum StaticType: Equatable, Sendable {
    case boolean, number, string, null, snapshot, regex, array, query
    /// `auth` or a value inside it: an object, a primitive or null.
    case any
    /// `val()` or `getPriority()`: a string, number, boolean or null (never known which).
    case primitive
    /// A conditional whose branches have different known types.
    case mixed

    /// Whether a value of this type may be a boolean at run time.
    var mayBeBoolean: Bool { self == .boolean || self == .any || self == .primitive }
    /// Whether a value of this type may be a string at run time.
    var mayBeString: Bool { self == .string || self == .any || self == .primitive }

    var name: String {
        switch self {
        case .boolean: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .null: "null"
        case .snapshot: "a snapshot"
        case .regex: "a regular expression"
        case .array: "an array"
        case .query: "the query"
        case .any, .primitive: "a value"
        case .mixed: "a value of mixed type"
        }
    }
}

/// A Pratt parser for the rules expression language, with Firebase's (JavaScript's) precedence,
/// resolving members and methods and checking types as it goes.
struct RuleParser {
    private let tokens: [(token: RuleToken, offset: Int)]
    private var index = 0
    private let kind: RuleKind
    private let wildcards: Set<String>
    /// How deep the parser is in nested expressions (see ``deepestNesting``).
    private var nesting = 0

    /// The most tokens one expression may have. A compiled expression is a tree no deeper than
    /// its tokens are many, and both the parser and the evaluator recurse over it: the limit keeps
    /// them far inside a thread's stack (a chain of 100,000 `||` would exhaust it).
    static let maxTokens = 2_000
    /// The deepest the parser may recurse: each parenthesis, `?:`, bracket or call argument list
    /// takes two levels, each `!` or `-` one.
    static let deepestNesting = 128

    static func parse(_ source: String, kind: RuleKind, wildcards: Set<String>) throws(RulesError) -> RuleNode {
        let tokens = try RuleLexer.tokens(source)
        guard tokens.count <= maxTokens + 1 else {
            throw RulesError(
                "the expression has more than \(maxTokens) tokens; split the rule over the locations below it, or simplify it",
                line: 1, column: 1, code: .invalidExpression)
        }
        var parser = RuleParser(tokens: tokens, kind: kind, wildcards: wildcards)
        let (node, type) = try parser.expression()
        guard parser.current == .end else {
            throw parser.error("unexpected \(parser.describe(parser.current)) after the end of the expression")
        }
        guard type.mayBeBoolean else {
            throw RulesError("a rule must evaluate to a boolean, but this one is \(type.name)", line: 1, column: 1, code: .invalidExpression)
        }
        return node
    }

    private init(tokens: [(token: RuleToken, offset: Int)], kind: RuleKind, wildcards: Set<String>) {
        self.tokens = tokens
        self.kind = kind
        self.wildcards = wildcards
    }

    private var current: RuleToken { tokens[index].token }

    private func error(_ message: String, underlying: (any Error)? = nil) -> RulesError {
        RulesError(message, line: 1, column: tokens[index].offset + 1, code: .invalidExpression, underlying: underlying)
    }

    private func describe(_ token: RuleToken) -> String {
        switch token {
        case .number(let value): "number \(RuleValue.format(value))"
        case .string(let value): "string '\(value)'"
        case .identifier(let name): "name \(name)"
        case .regex: "regular expression"
        case .symbol(let mark): "'\(mark)'"
        case .end: "end of the expression"
        }
    }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private mutating func accept(_ mark: String) -> Bool {
        guard current == .symbol(mark) else { return false }
        advance()
        return true
    }

    private mutating func expect(_ mark: String) throws(RulesError) {
        guard accept(mark) else { throw error("expected '\(mark)' but found \(describe(current))") }
    }

    // MARK: - Operators, lowest precedence first

    typealias Typed = (node: RuleNode, type: StaticType)

    /// Goes one level deeper into nested expressions; the caller leaves with `nesting -= 1`.
    private mutating func enter() throws(RulesError) {
        nesting += 1
        guard nesting <= Self.deepestNesting else {
            throw error("the expression nests deeper than \(Self.deepestNesting) levels (parentheses, !, -, ?:, brackets, calls); simplify it")
        }
    }

    private mutating func expression() throws(RulesError) -> Typed {
        try enter()
        defer { nesting -= 1 }
        let condition = try logicalOr()
        guard accept("?") else { return condition }
        try requireBoolean(condition.type, "the condition of ?:")
        let whenTrue = try expression()
        try expect(":")
        let whenFalse = try expression()
        let type: StaticType =
            whenTrue.type == whenFalse.type ? whenTrue.type
            : [.any, .primitive].contains(whenTrue.type) || [.any, .primitive].contains(whenFalse.type) ? .any
            : .mixed
        return (.conditional(condition.node, whenTrue.node, whenFalse.node), type)
    }

    private mutating func logicalOr() throws(RulesError) -> Typed {
        var left = try logicalAnd()
        while accept("||") {
            let right = try logicalAnd()
            try requireBoolean(left.type, "||")
            try requireBoolean(right.type, "||")
            left = (.or(left.node, right.node), .boolean)
        }
        return left
    }

    private mutating func logicalAnd() throws(RulesError) -> Typed {
        var left = try equality()
        while accept("&&") {
            let right = try equality()
            try requireBoolean(left.type, "&&")
            try requireBoolean(right.type, "&&")
            left = (.and(left.node, right.node), .boolean)
        }
        return left
    }

    private mutating func equality() throws(RulesError) -> Typed {
        var left = try comparison()
        while true {
            let negated: Bool
            if accept("==") || accept("===") { negated = false }
            else if accept("!=") || accept("!==") { negated = true }
            else { return left }
            let right = try comparison()
            for side in [left.type, right.type] where [.snapshot, .regex, .array, .query].contains(side) {
                throw error("\(side.name) cannot be compared; compare a value instead (for a snapshot, use val() or exists())")
            }
            left = (.binary(negated ? .notEqual : .equal, left.node, right.node), .boolean)
        }
    }

    private mutating func comparison() throws(RulesError) -> Typed {
        var left = try additive()
        while true {
            let operation: BinaryOperator
            if accept("<=") { operation = .lessOrEqual }
            else if accept(">=") { operation = .greaterOrEqual }
            else if accept("<") { operation = .less }
            else if accept(">") { operation = .greater }
            else { return left }
            let right = try additive()
            for side in [left.type, right.type] where ![.number, .string, .any, .primitive, .mixed].contains(side) {
                throw error("\(operation.rawValue) orders numbers or strings, not \(side.name)")
            }
            left = (.binary(operation, left.node, right.node), .boolean)
        }
    }

    private mutating func additive() throws(RulesError) -> Typed {
        var left = try multiplicative()
        while true {
            let operation: BinaryOperator
            if accept("+") { operation = .add }
            else if accept("-") { operation = .subtract }
            else { return left }
            let right = try multiplicative()
            try requireOperands(operation, left.type, right.type)
            let type: StaticType =
                operation == .subtract ? .number
                : left.type == .number && right.type == .number ? .number
                : left.type == .string || right.type == .string ? .string
                : .any
            left = (.binary(operation, left.node, right.node), type)
        }
    }

    private mutating func multiplicative() throws(RulesError) -> Typed {
        var left = try unary()
        while true {
            let operation: BinaryOperator
            if accept("*") { operation = .multiply }
            else if accept("/") { operation = .divide }
            else if accept("%") { operation = .remainder }
            else { return left }
            let right = try unary()
            try requireOperands(operation, left.type, right.type)
            left = (.binary(operation, left.node, right.node), .number)
        }
    }

    private mutating func unary() throws(RulesError) -> Typed {
        try enter()
        defer { nesting -= 1 }
        if accept("!") {
            let operand = try unary()
            try requireBoolean(operand.type, "!")
            return (.not(operand.node), .boolean)
        }
        if accept("-") {
            let operand = try unary()
            try requireOperands(.subtract, .number, operand.type)
            return (.negate(operand.node), .number)
        }
        return try postfix()
    }

    private func requireBoolean(_ type: StaticType, _ what: String) throws(RulesError) {
        guard type.mayBeBoolean else { throw error("\(what) needs booleans, not \(type.name)") }
    }

    private func requireOperands(_ operation: BinaryOperator, _ left: StaticType, _ right: StaticType) throws(RulesError) {
        for side in [left, right] where [.snapshot, .regex, .array, .query].contains(side) {
            throw error("\(operation.rawValue) cannot take \(side.name)")
        }
    }

    // MARK: - Members, calls and primaries

    private mutating func postfix() throws(RulesError) -> Typed {
        var target = try primary()
        while true {
            if accept(".") {
                guard case .identifier(let name) = current else {
                    throw error("expected a name after '.' but found \(describe(current))")
                }
                advance()
                target = try member(of: target, name: name)
            } else if accept("[") {
                let key = try expression()
                try expect("]")
                if current == .symbol("(") {
                    guard case .literal(.string(let name)) = key.node else {
                        throw error("a method must be named by a string written in the rule, not computed")
                    }
                    target = try member(of: target, name: name)
                } else {
                    guard [.any].contains(target.type) else {
                        throw error("\(target.type.name) has no members to index; \(target.type == .snapshot ? "use child()" : "remove the [ ]")")
                    }
                    if case .literal(.string(let name)) = key.node {
                        target = (.member(target.node, name), .any)
                    } else {
                        target = (.computedMember(target.node, key.node), .any)
                    }
                }
            } else {
                return target
            }
        }
    }

    /// `target.name`, or a call `target.name(...)` when a `(` follows.
    private mutating func member(of target: Typed, name: String) throws(RulesError) -> Typed {
        let isCall = current == .symbol("(")
        switch target.type {
        case .snapshot:
            guard isCall, let method = SnapshotMethod(rawValue: name) else {
                throw error(isCall ? "snapshots have no method \(name)()" : "snapshots have no property \(name); use child('\(name)') or a method such as val()")
            }
            return try snapshotCall(target, method)
        case .query:
            guard !isCall, let property = QueryProperty(rawValue: name) else {
                throw error("query has no \(isCall ? "method" : "property") \(name)")
            }
            let type: StaticType = [.orderByKey, .orderByValue, .orderByPriority].contains(property) ? .boolean : .any
            return (.query(property), type)
        case .string, .any, .primitive:
            if isCall {
                guard let method = StringMethod(rawValue: name) else {
                    throw error("\(target.type == .string ? "strings have" : "this value has") no method \(name)()")
                }
                return try stringCall(target, method)
            }
            if name == "length" { return (.length(target.node), .number) }
            guard target.type == .any else {
                throw error("\(target.type.name) has no property \(name)")
            }
            return (.member(target.node, name), .any)
        default:
            throw error("\(target.type.name) has no \(isCall ? "method" : "property") \(name)")
        }
    }

    private mutating func arguments() throws(RulesError) -> [Typed] {
        try expect("(")
        var arguments: [Typed] = []
        if accept(")") { return arguments }
        repeat {
            arguments.append(try expression())
        } while accept(",")
        try expect(")")
        return arguments
    }

    private func requireCount(_ arguments: [Typed], _ count: Int, _ method: String) throws(RulesError) {
        guard arguments.count == count else {
            throw error("\(method)() takes \(count == 0 ? "no" : String(count)) argument\(count == 1 ? "" : "s"), not \(arguments.count)")
        }
    }

    private func requireString(_ argument: Typed, _ method: String) throws(RulesError) {
        guard argument.type.mayBeString || argument.type == .mixed else {
            throw error("\(method)() takes a string, not \(argument.type.name)")
        }
    }

    private mutating func snapshotCall(_ target: Typed, _ method: SnapshotMethod) throws(RulesError) -> Typed {
        let arguments = try arguments()
        switch method {
        case .child, .hasChild:
            try requireCount(arguments, 1, method.rawValue)
            try requireString(arguments[0], method.rawValue)
            return (.snapshot(target.node, method, [arguments[0].node]), method == .child ? .snapshot : .boolean)
        case .hasChildren:
            if arguments.isEmpty { return (.hasChildren(target.node, nil), .boolean) }
            guard arguments.count == 1, case .array(let names) = arguments[0].node else {
                throw error("hasChildren() takes nothing or one array of names, such as hasChildren(['name', 'age'])")
            }
            guard !names.isEmpty else { throw error("hasChildren([]) needs at least one name") }
            for name in names {
                if case .literal(let value) = name, case .string = value { continue }
                if case .literal = name { throw error("hasChildren() takes an array of strings") }
            }
            return (.hasChildren(target.node, names), .boolean)
        case .val, .parent, .exists, .getPriority, .isNumber, .isString, .isBoolean:
            try requireCount(arguments, 0, method.rawValue)
            let type: StaticType =
                switch method {
                case .parent: .snapshot
                case .val, .getPriority: .primitive
                default: .boolean
                }
            return (.snapshot(target.node, method, []), type)
        }
    }

    private mutating func stringCall(_ target: Typed, _ method: StringMethod) throws(RulesError) -> Typed {
        let arguments = try arguments()
        switch method {
        case .contains, .beginsWith, .endsWith:
            try requireCount(arguments, 1, method.rawValue)
            try requireString(arguments[0], method.rawValue)
            return (.string(target.node, method, arguments.map(\.node)), .boolean)
        case .replace:
            try requireCount(arguments, 2, method.rawValue)
            for argument in arguments { try requireString(argument, method.rawValue) }
            return (.string(target.node, method, arguments.map(\.node)), .string)
        case .toLowerCase, .toUpperCase:
            try requireCount(arguments, 0, method.rawValue)
            return (.string(target.node, method, []), .string)
        case .matches:
            guard arguments.count == 1, case .regexLiteral(let regex) = arguments[0].node else {
                throw error("matches() takes a regular expression literal, such as matches(/^[a-z]+$/)")
            }
            return (.matches(target.node, regex), .boolean)
        }
    }

    private mutating func primary() throws(RulesError) -> Typed {
        let token = current
        switch token {
        case .number(let value):
            advance()
            return (.literal(.number(value)), .number)
        case .string(let value):
            advance()
            return (.literal(.string(value)), .string)
        case .regex(let pattern, let flags):
            let regex: RuleRegex
            do {
                regex = try RuleRegex(pattern: pattern, flags: flags)
            } catch {
                throw self.error(error.message, underlying: error)
            }
            advance()
            return (.regexLiteral(regex), .regex)
        case .identifier(let name):
            let resolved = try identifier(name)  // before advancing, so an error points at the name
            advance()
            return resolved
        case .symbol("("):
            advance()
            let inner = try expression()
            try expect(")")
            return inner
        case .symbol("["):
            advance()
            var elements: [RuleNode] = []
            if !accept("]") {
                repeat { elements.append(try expression().node) } while accept(",")
                try expect("]")
            }
            return (.array(elements), .array)
        case .end:
            throw error("the expression ends too early")
        default:
            throw error("unexpected \(describe(token))")
        }
    }

    private func identifier(_ name: String) throws(RulesError) -> Typed {
        switch name {
        case "true": return (.literal(.bool(true)), .boolean)
        case "false": return (.literal(.bool(false)), .boolean)
        case "null": return (.literal(.null), .null)
        case "auth": return (.variable(.auth), .any)
        case "root", "data": return (.variable(name == "root" ? .root : .data), .snapshot)
        case "now": return (.variable(.now), .number)
        case "newData":
            guard kind != .read else { throw error("newData is only known in .write and .validate rules") }
            return (.variable(.newData), .snapshot)
        case "query":
            guard kind == .read else { throw error("query is only known in .read rules") }
            return (.variable(.query), .query)
        default:
            if name.hasPrefix("$") {
                guard wildcards.contains(name) else {
                    throw error("\(name) is not a wildcard of this location; the rule's path must have a \(name) key above it")
                }
                return (.wildcard(name), .string)
            }
            throw error("unknown name \(name); rules know auth, root, data, newData, now, query and $wildcards")
        }
    }
}
