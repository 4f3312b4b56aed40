public import CoreTree
public import Foundation
public import SyncProtocol

/// Why a database operation failed.
///
/// Completion blocks receive it as their `Error`; the `async` forms throw it. The codes and
/// their raw values follow the Firebase client's (`FIRDatabaseErrorCode` statuses), so code that
/// switches on status strings keeps working.
public struct DatabaseError: CodedError, Sendable, CustomStringConvertible, LocalizedError, CustomNSError {
    /// The kind of failure.
    ///
    /// Codes the server can send are its wire statuses (``SyncProtocol/WireStatus``), so a
    /// rejection reaches the app as the constant that names it; ``offline``, ``notCached``,
    /// ``storageFailure`` and ``persistenceInUse`` are the client's own.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The status string, as the server sends it (`permission_denied`, `datastale`, ...).
        public let rawValue: String
        /// A code from its status string (other clients' spellings, such as `maxretries`, are
        /// read as ours).
        public init(rawValue: String) { self.rawValue = WireStatus(rawValue: rawValue).rawValue }
        /// The code for a wire status.
        public init(_ status: WireStatus) { rawValue = status.rawValue }

        /// Security rules denied the operation.
        public static let permissionDenied = Code(.permissionDenied)
        /// A transaction's data changed on the server too often (compare-and-set kept failing).
        public static let dataStale = Code(.dataStale)
        /// The server failed the operation (its storage failed, say); nothing was written.
        public static let failure = Code(.failure)
        /// The server is unavailable.
        public static let unavailable = Code(.unavailable)
        /// The write was larger than the server accepts.
        public static let tooBig = Code(.tooBig)
        /// The connection dropped while the operation was in flight.
        public static let disconnected = Code(.disconnected)
        /// The auth token expired.
        public static let expiredToken = Code(.expiredToken)
        /// The auth token was rejected.
        public static let invalidToken = Code(.invalidToken)
        /// A transaction was retried the maximum number of times (25).
        public static let maxRetries = Code(.maxRetries)
        /// A set or update at the same location replaced a pending transaction.
        public static let overriddenBySet = Code(.overriddenBySet)
        /// `purgeOutstandingWrites()` cancelled the write.
        public static let writeCanceled = Code(.writeCanceled)
        /// A key, path, value or query was invalid, here or on the server; nothing was written.
        public static let invalidArgument = Code(.invalidArgs)
        /// The client is offline: it has nothing cached for the request, or the request was for
        /// the server only (`getData(source: .server)`).
        public static let offline = Code(rawValue: "offline")
        /// The cache has no complete data for a read from the cache only (`getData(source: .cache)`).
        public static let notCached = Code(rawValue: "not_cached")
        /// Local storage failed (disk full, say); nothing was written.
        public static let storageFailure = Code(rawValue: "storage_failure")
        /// The persistence directory is open in another process (or another `Database` in this
        /// one); the message names the process. Persistence is off for this instance.
        public static let persistenceInUse = Code(rawValue: "persistence_in_use")

        /// The status string.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words a developer can act on.
    public var message: String
    /// The error that caused this one (the local store's error, an encoding error), if any. Also
    /// in the bridged `NSError`'s `userInfo` under `NSUnderlyingErrorKey`.
    public var underlyingError: (any Error)?

    /// An error with a code and message, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    /// The error for a status that is not ``SyncProtocol/WireStatus/ok``.
    init(status: WireStatus, message: String?, underlying: (any Error)? = nil) {
        let code = Code(status)
        self.init(code, message ?? DatabaseError.defaultMessage(for: code), underlying: underlying)
    }

    /// Words for `cause` to put in a message: a coded error's own message (the store's, the
    /// transport's), else its localized description. The cause itself goes in ``underlyingError``.
    static func reason(_ cause: any Error) -> String {
        if let coded = cause as? any CodedError { return coded.message }
        return cause.localizedDescription
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

    /// The bridged `NSError`'s domain.
    public static var errorDomain: String { "com.firebase.database" }

    /// The message and, when there is one, the cause under `NSUnderlyingErrorKey`.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [NSLocalizedDescriptionKey: message]
        if let underlyingError { info[NSUnderlyingErrorKey] = underlyingError as NSError }
        return info
    }
}
