/// An error raised by CoreTree when a key, path, value or JSON document is not acceptable.
///
/// Every error carries a ``Code`` that programs can switch on and a message written for the
/// person who has to fix the input: it names the offending key, path or value and the rule broken.
/// Two errors are equal when their code and message are (``CodedError``); the cause is not compared.
public struct CoreTreeError: CodedError, Sendable, CustomStringConvertible {
    /// The kind of problem, extensible without breaking callers that switch over known codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidKey, invalidPath, pathTooLong, pathTooDeep, valueTooLarge
            case invalidValue, invalidPriority, malformedJSON, unsupportedType
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A key is empty or contains `.` `#` `$` `[` `]` `/` or an ASCII control character.
        public static let invalidKey = Code(.invalidKey)
        /// A path string contains a character that is not allowed in a path.
        public static let invalidPath = Code(.invalidPath)
        /// A path (including the data written below it) is longer than 768 UTF-8 bytes.
        public static let pathTooLong = Code(.pathTooLong)
        /// A path (including the data written below it) is deeper than 32 levels.
        public static let pathTooDeep = Code(.pathTooDeep)
        /// A string value is larger than 10 MB.
        public static let valueTooLarge = Code(.valueTooLarge)
        /// A value cannot be stored (NaN, infinity, `.value` beside children, a bad server value).
        public static let invalidValue = Code(.invalidValue)
        /// A priority is not a number, a string or null.
        public static let invalidPriority = Code(.invalidPriority)
        /// A JSON document is not well formed.
        public static let malformedJSON = Code(.malformedJSON)
        /// A Foundation value has a type that has no JSON form.
        public static let unsupportedType = Code(.unsupportedType)

        public var description: String { base.rawValue }
    }

    /// What went wrong, for programs.
    public var code: Code
    /// What went wrong and what to do about it, for people.
    public var message: String
    /// The error that caused this one (a lower layer's error wrapped with more context), if any.
    public var underlyingError: (any Error)?

    /// Creates an error with a code and an actionable message, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    public var description: String { "CoreTreeError.\(code): \(message)" }
}
