public import CoreTree

/// A message that breaks the wire protocol, or a request the protocol cannot carry out.
///
/// The ``Code`` says what kind of problem it is; the message says what was wrong and, where it
/// helps, what to send instead.
public struct ProtocolError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of protocol error.
    public enum Code: String, Sendable, Hashable {
        /// A frame or envelope that is not the protocol's JSON (bad JSON, wrong shape, bad frame count).
        case malformedFrame
        /// A request whose action the receiver does not know.
        case unknownAction
        /// A request whose arguments are invalid: a bad path, key, value, query or hash.
        case invalidArgument
        /// A message or write larger than the protocol allows.
        case tooBig
    }

    /// What kind of problem this is.
    public var code: Code
    /// What was wrong, for a person to act on.
    public var message: String
    /// The error that caused this one (a JSON parse error, say), if any.
    public var underlyingError: (any Error)?

    /// Makes an error, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    public var description: String { "ProtocolError.\(code.rawValue): \(message)" }
}
