/// An error made of a kind (``code``), words for a person (``message``) and, optionally, the
/// error that caused it. Two such errors are equal when their code and message are: the cause is
/// carried for logs and debugging, not compared.
///
/// Every module's public error adopts it (`CoreTreeError`, `QueryError`, `StorageError`,
/// `ProtocolError`, `RulesError`, `DatabaseError`, `ServerError`, ...) and gets `==` and
/// `hash(into:)`; a type that must compare more (a rules error's line and column) declares its own.
public protocol CodedError: Error, Hashable {
    /// The kind of error.
    associatedtype Code: Hashable
    /// What kind of error this is.
    var code: Code { get }
    /// What went wrong, for a person to act on.
    var message: String { get }
    /// The error that caused this one, if any.
    var underlyingError: (any Error)? { get }
}

extension CodedError {
    /// Equal when code and message are (the cause is not compared).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    /// Hashes the code and the message.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
