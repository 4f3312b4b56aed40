/// A token of the rules expression language.
enum RuleToken: Equatable, Sendable {
    case number(Double)
    case string(String)
    case identifier(String)
    /// A regular expression literal: `/pattern/flags`.
    case regex(pattern: String, flags: String)
    /// An operator or punctuation mark: `( ) [ ] . , ? : ! && || == === != !== < <= > >= + - * / %`.
    case symbol(String)
    case end
}

/// Splits an expression into tokens. A `/` starts a regular expression literal where an operand
/// is expected (after an operator, a comma or an opening bracket) and is division elsewhere, as in
/// JavaScript.
struct RuleLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var previous: RuleToken = .symbol("(")

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    /// Every token with the offset (in characters) where it starts, ending with `.end`.
    static func tokens(_ text: String) throws(RulesError) -> [(token: RuleToken, offset: Int)] {
        var lexer = RuleLexer(text)
        var tokens: [(RuleToken, Int)] = []
        while true {
            let (token, offset) = try lexer.next()
            tokens.append((token, offset))
            if token == .end { return tokens }
        }
    }

    private mutating func next() throws(RulesError) -> (RuleToken, Int) {
        while position < scalars.count, scalars[position].properties.isWhitespace { position += 1 }
        let start = position
        guard position < scalars.count else { return (.end, start) }
        let scalar = scalars[position]
        let token: RuleToken
        switch scalar {
        case "0"..."9":
            token = try number()
        case ".":
            if position + 1 < scalars.count, ("0"..."9").contains(scalars[position + 1]) {
                token = try number()
            } else {
                position += 1
                token = .symbol(".")
            }
        case "'", "\"":
            token = try string(quote: scalar)
        case "/" where expectsOperand:
            token = try regex()
        case _ where Self.startsIdentifier(scalar):
            var name = ""
            while position < scalars.count, Self.continuesIdentifier(scalars[position]) {
                name.unicodeScalars.append(scalars[position])
                position += 1
            }
            token = .identifier(name)
        default:
            token = try symbol()
        }
        previous = token
        return (token, start)
    }

    /// Whether the previous token leaves the parser expecting an operand (so `/` opens a regex).
    private var expectsOperand: Bool {
        switch previous {
        case .number, .string, .identifier, .regex: false
        case .symbol(let mark): ![")", "]"].contains(mark)
        case .end: true
        }
    }

    private static func startsIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "$" || scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func continuesIdentifier(_ scalar: Unicode.Scalar) -> Bool {
        startsIdentifier(scalar) || ("0"..."9").contains(scalar)
    }

    private func error(_ message: String, at offset: Int) -> RulesError {
        RulesError(message, line: 1, column: offset + 1, code: .invalidExpression)
    }

    private mutating func number() throws(RulesError) -> RuleToken {
        let start = position
        var text = ""
        func digits() {
            while position < scalars.count, ("0"..."9").contains(scalars[position]) {
                text.unicodeScalars.append(scalars[position])
                position += 1
            }
        }
        digits()
        if position < scalars.count, scalars[position] == "." {
            text.append(".")
            position += 1
            digits()
        }
        if position < scalars.count, scalars[position] == "e" || scalars[position] == "E" {
            text.append("e")
            position += 1
            if position < scalars.count, scalars[position] == "+" || scalars[position] == "-" {
                text.unicodeScalars.append(scalars[position])
                position += 1
            }
            digits()
        }
        if text.hasPrefix(".") { text = "0" + text }
        guard let value = Double(text), value.isFinite else {
            throw error("\(text) is not a number", at: start)
        }
        if position < scalars.count, Self.continuesIdentifier(scalars[position]) {
            throw error("a number cannot run into a name here", at: position)
        }
        return .number(value)
    }

    private mutating func string(quote: Unicode.Scalar) throws(RulesError) -> RuleToken {
        let start = position
        position += 1
        var value = ""
        while position < scalars.count {
            let scalar = scalars[position]
            position += 1
            if scalar == quote { return .string(value) }
            guard scalar == "\\" else {
                value.unicodeScalars.append(scalar)
                continue
            }
            guard position < scalars.count else { break }
            let escaped = scalars[position]
            position += 1
            if let character = RuleEscapes.character(escaped) {
                value.unicodeScalars.append(character)
                continue
            }
            switch escaped {
            case "u":
                guard position + 4 <= scalars.count,
                      let code = UInt32(String(String.UnicodeScalarView(scalars[position..<(position + 4)])), radix: 16),
                      let decoded = Unicode.Scalar(code) else {
                    throw error("\\u needs four hexadecimal digits", at: position - 2)
                }
                value.unicodeScalars.append(decoded)
                position += 4
            default: value.unicodeScalars.append(escaped)
            }
        }
        throw error("this string has no closing \(quote)", at: start)
    }

    private mutating func regex() throws(RulesError) -> RuleToken {
        let start = position
        position += 1
        var pattern = ""
        var inClass = false
        while position < scalars.count {
            let scalar = scalars[position]
            position += 1
            if scalar == "\\", position < scalars.count {
                pattern.unicodeScalars.append(scalar)
                pattern.unicodeScalars.append(scalars[position])
                position += 1
                continue
            }
            if scalar == "[" { inClass = true }
            if scalar == "]" { inClass = false }
            if scalar == "/" && !inClass {
                var flags = ""
                while position < scalars.count, Self.continuesIdentifier(scalars[position]) {
                    flags.unicodeScalars.append(scalars[position])
                    position += 1
                }
                return .regex(pattern: pattern, flags: flags)
            }
            pattern.unicodeScalars.append(scalar)
        }
        throw error("this regular expression has no closing /", at: start)
    }

    private mutating func symbol() throws(RulesError) -> RuleToken {
        let start = position
        let rest = String(String.UnicodeScalarView(scalars[position..<min(position + 3, scalars.count)]))
        for mark in ["===", "!==", "&&", "||", "==", "!=", "<=", ">=", "(", ")", "[", "]", ",", "?", ":", "!", "<", ">", "+", "-", "*", "/", "%"]
        where rest.hasPrefix(mark) {
            position += mark.unicodeScalars.count
            return .symbol(mark)
        }
        switch scalars[start] {
        case "=": throw error("assignment is not allowed in a rule; compare with == or ===", at: start)
        case ";": throw error("a rule is a single expression; ; is not allowed", at: start)
        case "&", "|": throw error("bitwise operators are not allowed; use && or ||", at: start)
        default: throw error("unexpected character \(scalars[start])", at: start)
        }
    }
}
