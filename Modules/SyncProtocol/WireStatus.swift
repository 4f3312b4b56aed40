/// The status of a request, as the wire protocol spells it: the `s` of a reply
/// (`{"r": 7, "b": {"s": "permission_denied", "d": "..."}}`), the status of an auth revocation,
/// and the reasons a client gives up on a request by itself.
///
/// This is the one place the status strings are written. Server, client connection and client
/// API all name statuses through these constants, so a status the server sends is one the client
/// recognises: ``init(rawValue:)`` also reads the spellings other Firebase clients and servers use
/// (`maxretries`, `failed`).
public struct WireStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The status string as sent on the wire.
    public let rawValue: String

    /// The status named `rawValue`, with other implementations' spellings read as ours.
    public init(rawValue: String) {
        switch rawValue {
        case "maxretries": self.rawValue = WireStatus.maxRetries.rawValue
        case "failed": self.rawValue = WireStatus.failure.rawValue
        default: self.rawValue = rawValue
        }
    }

    private init(_ rawValue: String) { self.rawValue = rawValue }

    /// The status string.
    public var description: String { rawValue }

    /// Whether this is ``ok``.
    public var isOK: Bool { self == .ok }

    // MARK: Sent by the server

    /// The request succeeded.
    public static let ok = WireStatus("ok")
    /// Security rules deny the request.
    public static let permissionDenied = WireStatus("permission_denied")
    /// A compare-and-set put's hash no longer matches the data (a transaction must run again).
    public static let dataStale = WireStatus("datastale")
    /// The write or message is larger than the server accepts.
    public static let tooBig = WireStatus("too_big")
    /// The request's path, key, value, query or parameters are invalid; nothing was written.
    public static let invalidArgs = WireStatus("invalid_args")
    /// The server could not carry the request out (its storage failed, say); nothing was written.
    public static let failure = WireStatus("failure")
    /// The server or the namespace is unavailable (shutting down, cannot be opened).
    public static let unavailable = WireStatus("unavailable")
    /// The auth token was rejected.
    public static let invalidToken = WireStatus("invalid_token")
    /// The auth token has expired.
    public static let expiredToken = WireStatus("expired_token")

    // MARK: Decided by the client

    /// A sent compare-and-set put whose connection dropped before the answer.
    public static let disconnected = WireStatus("disconnected")
    /// A write dropped by the app (`purgeOutstandingWrites`).
    public static let writeCanceled = WireStatus("write_canceled")
    /// A transaction retried the maximum number of times.
    public static let maxRetries = WireStatus("maxretry")
    /// A set or update at a transaction's location replaced the pending transaction.
    public static let overriddenBySet = WireStatus("overriddenbyset")
}
