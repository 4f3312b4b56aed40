public import CoreTree

/// An error raised when a query is built with parameters the database does not accept.
public struct QueryError: CodedError, Sendable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// Two calls set the same thing (two orderBy, two limits, two start points, ...).
        public static let alreadySet = Code("alreadySet")
        /// A bound's value has the wrong type for the query's order.
        public static let invalidBound = Code("invalidBound")
        /// A limit is not a positive integer.
        public static let invalidLimit = Code("invalidLimit")
        /// A wire-form query object could not be read.
        public static let invalidWireForm = Code("invalidWireForm")
        public var description: String { name }
    }

    /// What went wrong, for programs.
    public var code: Code
    /// What went wrong and how to fix it, for people.
    public var message: String
    /// The error that caused this one (a wire-form value that did not parse, say), if any.
    public var underlyingError: (any Error)?

    /// Creates an error, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    public var description: String { "QueryError.\(code): \(message)" }
}
