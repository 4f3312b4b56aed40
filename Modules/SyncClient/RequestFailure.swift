public import CoreTree
public import SyncProtocol

/// A request the server refused (for example `permission_denied`), as an error.
///
/// Its ``code`` is the server's ``status``; its ``message`` is what the server said, or, when it
/// said nothing, a sentence naming the status.
public struct RequestFailure: CodedError, Sendable, CustomStringConvertible {
    /// The server's status.
    public var status: WireStatus
    /// The server's own message, if it sent one.
    public var serverMessage: String?
    /// The error that made the client give up on the request by itself, if any.
    public var underlyingError: (any Error)?

    /// Makes a failure.
    public init(status: WireStatus, message: String? = nil, underlying: (any Error)? = nil) {
        self.status = status
        serverMessage = message
        underlyingError = underlying
    }

    /// A failure from a non-ok ``RequestStatus``.
    public init(_ status: RequestStatus) {
        self.init(status: status.status, message: status.message)
    }

    /// The server's status (``status``).
    public var code: WireStatus { status }

    /// The server's message, or a sentence naming the status when the server sent none.
    /// Setting it sets ``serverMessage``.
    public var message: String {
        get { serverMessage ?? "The server refused the request with status \(status.rawValue)." }
        set { serverMessage = newValue }
    }

    /// The status, then the server's message if any.
    public var description: String {
        serverMessage.map { "\(status): \($0)" } ?? status.rawValue
    }
}
