public import CoreTree

/// A rules document or expression that cannot be installed: a syntax error, or a type error the
/// server reports at deploy time (Firebase answers both with HTTP 400).
///
/// `line` and `column` (both from 1) locate the problem in the rules document; the message says
/// what is wrong and, where it can, what to write instead. Two errors are equal when their code,
/// message, line and column are.
public struct RulesError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The document is not well-formed JSON (with comments and trailing commas allowed).
        public static let malformedDocument = Code("malformedDocument")
        /// The document's shape is wrong: an unknown key, a rule of the wrong type, nesting too deep.
        public static let invalidRules = Code("invalidRules")
        /// A rule expression does not parse or does not type-check.
        public static let invalidExpression = Code("invalidExpression")
        public var description: String { name }
    }

    /// What kind of problem this is.
    public let code: Code
    /// What is wrong, in words meant for the person editing the rules.
    public let message: String
    /// The line of the document (from 1), or 1 for a lone expression.
    public let line: Int
    /// The column of the document (from 1, in characters).
    public let column: Int
    /// The error that caused this one (an expression's own error, placed in the document), if any.
    public let underlyingError: (any Error)?

    /// An error at `line` and `column`.
    public init(_ message: String, line: Int, column: Int, code: Code = .invalidRules, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        underlyingError = underlying
    }

    /// "line L, column C: message".
    public var description: String { "line \(line), column \(column): \(message)" }

    /// Equal when code, message, line and column are (the cause is not compared).
    public static func == (lhs: RulesError, rhs: RulesError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.line == rhs.line && lhs.column == rhs.column
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(line)
        hasher.combine(column)
    }
}

/// A failure while evaluating an expression (a method called on null, arithmetic on a string, a
/// path that is not a string ...). The rule that raised it evaluates to false.
struct RuleEvaluationError: CodedError, Sendable {
    var code: String { "evaluationFailed" }
    let message: String
    var underlyingError: (any Error)? { nil }
    init(_ message: String) { self.message = message }
}
