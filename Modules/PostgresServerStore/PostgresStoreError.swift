public import CoreTree
public import ServerCore

/// Why the PostgreSQL store failed: a message an operator can act on, and the cause.
public struct PostgresStoreError: CodedError, SharedCommitFailure, CustomStringConvertible, Sendable {
    /// The kinds of failure.
    public enum Code: Sendable, Hashable {
        /// PostgreSQL did not answer, or answered with an error.
        case database
        /// The store was closed.
        case closed
        /// A URL or stored record could not be read.
        case invalidInput
        /// A commit was sent and its answer did not come in time: it may have been made.
        case outcomeUnknown
    }

    /// What kind of failure this is.
    public let code: Code
    /// What went wrong.
    public let message: String
    /// The underlying error (postgres-nio's), when there is one.
    public let underlying: (any Error)?
    /// The underlying error, as ``CoreTree/CodedError`` names it.
    public var underlyingError: (any Error)? { underlying }

    init(_ message: String, code: Code = .database, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Whether a failed commit may still have been made (``Code/outcomeUnknown``).
    public var mayHaveCommitted: Bool { code == .outcomeUnknown }

    public var description: String {
        guard let underlying else { return message }
        return "\(message) (\(String(reflecting: underlying).prefix(300)))"
    }
}
