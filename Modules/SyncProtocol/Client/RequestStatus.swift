/// The server's answer to a request, or the client's reason for giving up on it.
public struct RequestStatus: Sendable, Equatable {
    /// `"ok"`, a server status such as `"datastale"` or `"permission_denied"`, or a client-side
    /// status: `"disconnected"` (a sent compare-and-set put whose connection dropped) or
    /// `"write_canceled"` (see ``PersistentConnection/purgeOutstandingWrites()``).
    public var status: String
    /// The reply's `d` when it is a string error message.
    public var message: String?

    /// Makes a status.
    public init(status: String, message: String? = nil) {
        self.status = status
        self.message = message
    }

    /// Whether the request succeeded.
    public var isOK: Bool { status == "ok" }

    /// Success.
    public static let ok = RequestStatus(status: "ok")
    /// A sent compare-and-set put whose connection dropped before the answer.
    public static let disconnected = RequestStatus(status: "disconnected")
    /// A write dropped by ``PersistentConnection/purgeOutstandingWrites()``.
    public static let writeCanceled = RequestStatus(status: "write_canceled")
}
