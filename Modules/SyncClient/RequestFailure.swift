public import SyncProtocol
/// A request the server refused (for example `permission_denied`), as an error.
public struct RequestFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server's status.
    public var status: WireStatus
    /// The server's message, if it sent one.
    public var message: String?

    /// Makes a failure.
    public init(status: WireStatus, message: String? = nil) {
        self.status = status
        self.message = message
    }

    /// A failure from a non-ok ``RequestStatus``.
    public init(_ status: RequestStatus) {
        self.init(status: status.status, message: status.message)
    }

    /// The status, then the message if any.
    public var description: String {
        message.map { "\(status): \($0)" } ?? status.rawValue
    }
}
