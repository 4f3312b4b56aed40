/// Turns the `rules` object of a document into ``RuleLocation``s, compiling every expression.
enum RuleCompiler {
    /// Rule documents nest no deeper than data paths (32 levels) in practice; a margin above that.
    static let deepest = 64

    static func location(_ text: RulesText, wildcards: Set<String>, depth: Int) throws(RulesError) -> RuleLocation {
        guard depth <= deepest else {
            throw RulesError("rules nest deeper than \(deepest) levels", line: text.location.line, column: text.location.column)
        }
        guard case .object(let members, _) = text else {
            throw RulesError("expected an object of rules here, found \(text.kindName)", line: text.location.line, column: text.location.column)
        }
        var read: RuleExpression?, write: RuleExpression?, validate: RuleExpression?
        var indexOn: [String] = []
        var children: [String: RuleLocation] = [:]
        var wildcard: (name: String, location: RuleLocation)?
        for member in members {
            let key = member.key
            func fail(_ message: String, at location: RulesText.Location? = nil) -> RulesError {
                let at = location ?? member.keyAt
                return RulesError(message, line: at.line, column: at.column)
            }
            switch key {
            case ".read", ".write", ".validate":
                let kind = RuleKind(rawValue: key)!
                let expression = try Self.expression(member.value, kind: kind, wildcards: wildcards)
                switch kind {
                case .read: read = expression
                case .write: write = expression
                case .validate: validate = expression
                }
            case ".indexOn":
                indexOn = try Self.indexOn(member.value)
            case _ where key.hasPrefix("."):
                throw fail("unknown rule \(key); rules are .read, .write, .validate and .indexOn")
            case _ where key.hasPrefix("$"):
                if let existing = wildcard {
                    throw fail("two wildcards (\(existing.name) and \(key)) at one location; keep one")
                }
                guard !wildcards.contains(key) else {
                    throw fail("the wildcard \(key) is already used above this location; give this one another name")
                }
                wildcard = (key, try location(member.value, wildcards: wildcards.union([key]), depth: depth + 1))
            default:
                if let problem = Self.keyProblem(key) { throw fail("the key \"\(key)\" \(problem)") }
                children[key] = try location(member.value, wildcards: wildcards, depth: depth + 1)
            }
        }
        return RuleLocation(read: read, write: write, validate: validate, indexOn: indexOn, children: children, wildcard: wildcard)
    }

    private static func expression(_ value: RulesText, kind: RuleKind, wildcards: Set<String>) throws(RulesError) -> RuleExpression {
        switch value {
        case .bool(let constant, _):
            return RuleExpression(constant: constant, kind: kind)
        case .string(let source, let at):
            do {
                return try RuleExpression(source, kind: kind, wildcards: wildcards)
            } catch {
                // Place the error in the document: the string starts one column after its quote.
                var line = at.line, column = at.column + 1
                for (offset, character) in source.unicodeScalars.enumerated() where offset < error.column - 1 {
                    if character == "\n" { line += 1; column = 1 } else { column += 1 }
                }
                throw RulesError("in \(kind.rawValue): \(error.message)", line: line, column: column, code: error.code, underlying: error)
            }
        default:
            throw RulesError("\(kind.rawValue) is a boolean or an expression string, not \(value.kindName)",
                             line: value.location.line, column: value.location.column)
        }
    }

    private static func indexOn(_ value: RulesText) throws(RulesError) -> [String] {
        switch value {
        case .string(let name, _):
            return [name]
        case .array(let elements, _):
            return try elements.map { (element) throws(RulesError) -> String in
                guard case .string(let name, _) = element else {
                    throw RulesError(".indexOn lists child names as strings, not \(element.kindName)",
                                     line: element.location.line, column: element.location.column)
                }
                return name
            }
        default:
            throw RulesError(".indexOn is a child name or an array of them, not \(value.kindName)",
                             line: value.location.line, column: value.location.column)
        }
    }

    /// Why `key` cannot name a child location, or nil.
    private static func keyProblem(_ key: String) -> String? {
        if key.isEmpty { return "is empty" }
        for forbidden in [".", "#", "[", "]", "/"] where key.contains(forbidden) {
            return "contains \(forbidden), which keys cannot hold"
        }
        return nil
    }
}
