public import Foundation

/// Why a database operation failed.
///
/// Completion blocks receive it as their `Error`; the `async` forms throw it. The codes and
/// their raw values follow the Firebase client's (`FIRDatabaseErrorCode` statuses), so code that
/// switches on status strings keeps working.
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The status string, as the server sends it (`permission_denied`, `datastale`, ...).
        public let rawValue: String
        /// A code from its status string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Security rules denied the operation.
        public static let permissionDenied = Code(rawValue: "permission_denied")
        /// A transaction's data changed on the server too often (compare-and-set kept failing).
        public static let dataStale = Code(rawValue: "datastale")
        /// The server failed the operation.
        public static let failure = Code(rawValue: "failure")
        /// The server is unavailable.
        public static let unavailable = Code(rawValue: "unavailable")
        /// The write was larger than the server accepts.
        public static let tooBig = Code(rawValue: "too_big")
        /// The connection dropped while the operation was in flight.
        public static let disconnected = Code(rawValue: "disconnected")
        /// The auth token expired.
        public static let expiredToken = Code(rawValue: "expired_token")
        /// The auth token was rejected.
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// A transaction was retried the maximum number of times (25).
        public static let maxRetries = Code(rawValue: "maxretry")
        /// A set or update at the same location replaced a pending transaction.
        public static let overriddenBySet = Code(rawValue: "overriddenbyset")
        /// `purgeOutstandingWrites()` cancelled the write.
        public static let writeCanceled = Code(rawValue: "write_canceled")
        /// The client is offline and has nothing cached for the request.
        public static let offline = Code(rawValue: "offline")
        /// A key, path, value or query was invalid; nothing was written.
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        /// Local storage failed (disk full, say); nothing was written.
        public static let storageFailure = Code(rawValue: "storage_failure")

        /// The status string.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words a developer can act on.
    public var message: String

    /// An error with a code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The error for a server status that is not `ok`.
    init(status: String, message: String?) {
        let code = Code(rawValue: status == "maxretries" ? Code.maxRetries.rawValue : status)
        self.init(code, message ?? DatabaseError.defaultMessage(for: code))
    }

    static func defaultMessage(for code: Code) -> String {
        switch code {
        case .permissionDenied: "Permission denied: the client doesn't have permission for this operation."
        case .dataStale: "The transaction needs to be run again with current data."
        case .disconnected: "The operation had to be aborted due to a network disconnect."
        case .maxRetries: "The transaction had too many retries."
        case .overriddenBySet: "The transaction was overridden by a subsequent set."
        case .writeCanceled: "The write was canceled by the user."
        case .expiredToken: "The supplied auth token has expired."
        case .invalidToken: "The supplied auth token was invalid."
        case .tooBig: "The data is larger than the server accepts."
        default: "The server reported \(code.rawValue)."
        }
    }

    /// The code and the message.
    public var description: String { "DatabaseError.\(code): \(message)" }
    /// The message, for `localizedDescription`.
    public var errorDescription: String? { message }
}
