/// A rules document or expression that cannot be installed: a syntax error, or a type error the
/// server reports at deploy time (Firebase answers both with HTTP 400).
///
/// `line` and `column` (both from 1) locate the problem in the rules document; the message says
/// what is wrong and, where it can, what to write instead.
public struct RulesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in words meant for the person editing the rules.
    public let message: String
    /// The line of the document (from 1), or 1 for a lone expression.
    public let line: Int
    /// The column of the document (from 1, in characters).
    public let column: Int

    /// An error at `line` and `column`.
    public init(_ message: String, line: Int, column: Int) {
        self.message = message
        self.line = line
        self.column = column
    }

    /// "line L, column C: message".
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// A failure while evaluating an expression (a method called on null, arithmetic on a string, a
/// path that is not a string ...). The rule that raised it evaluates to false.
struct RuleEvaluationError: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
