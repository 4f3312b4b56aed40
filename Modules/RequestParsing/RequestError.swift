public import CoreTree

/// A REST request whose target (path or query string) cannot be read: bad percent-encoding,
/// text that is not UTF-8, or a query parameter that is not what it must be.
///
/// The server answers it with `400` and the message; the request changes no data.
public struct RequestError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of problem.
    public enum Code: String, Sendable, Hashable {
        /// A `%` not followed by two hex digits, or percent-decoded bytes that are not UTF-8.
        case badEncoding
        /// A query parameter whose value is not valid (`orderBy`, a bound, a limit).
        case invalidParameter
    }

    /// What kind of problem this is.
    public var code: Code
    /// What was wrong and what to send instead.
    public var message: String
    /// The error that caused this one (a query error), if any.
    public var underlyingError: (any Error)?

    /// Makes an error, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    public var description: String { "RequestError.\(code.rawValue): \(message)" }
}
