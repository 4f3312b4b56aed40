public import SyncProtocol

/// The server's answer to a request, or the client's reason for giving up on it.
public struct RequestStatus: Sendable, Equatable {
    /// ``SyncProtocol/WireStatus/ok``, a server status such as ``SyncProtocol/WireStatus/dataStale``
    /// or ``SyncProtocol/WireStatus/permissionDenied``, or a client-side one:
    /// ``SyncProtocol/WireStatus/disconnected`` (a sent compare-and-set put whose connection
    /// dropped) or ``SyncProtocol/WireStatus/writeCanceled`` (see
    /// ``PersistentConnection/purgeOutstandingWrites()``).
    public var status: WireStatus
    /// The reply's `d` when it is a string error message.
    public var message: String?

    /// Makes a status.
    public init(status: WireStatus, message: String? = nil) {
        self.status = status
        self.message = message
    }

    /// Whether the request succeeded.
    public var isOK: Bool { status.isOK }

    /// Success.
    public static let ok = RequestStatus(status: .ok)
    /// A sent compare-and-set put whose connection dropped before the answer.
    public static let disconnected = RequestStatus(status: .disconnected)
    /// A write dropped by ``PersistentConnection/purgeOutstandingWrites()``.
    public static let writeCanceled = RequestStatus(status: .writeCanceled)
}
