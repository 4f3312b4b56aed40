/// Why the PostgreSQL store failed: a message an operator can act on, and the cause.
public struct PostgresStoreError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let message: String
    /// The underlying error (postgres-nio's), when there is one.
    public let underlying: (any Error)?

    init(_ message: String, underlying: (any Error)? = nil) {
        self.message = message
        self.underlying = underlying
    }

    public var description: String {
        guard let underlying else { return message }
        return "\(message) (\(String(reflecting: underlying).prefix(300)))"
    }
}
