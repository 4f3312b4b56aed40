public import CoreTree
public import SyncProtocol

/// Why the server refused or could not carry out a request.
///
/// Each code maps to a WebSocket status string and an HTTP status code, as the Firebase clients
/// expect them.
public struct ServerError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of error.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Invalid data, path, key, query or parameters.
        case invalidArgument
        /// A write or value over a size limit.
        case tooBig
        /// The security rules deny the request.
        case permissionDenied
        /// The storage underneath failed (for example, the disk is full); nothing was written.
        case storageFailed
        /// The request is not allowed on this path or with these credentials (e.g. writing `.info`).
        case notAllowed
        /// The namespace or server is shutting down or cannot be opened.
        case unavailable
    }

    /// What kind of error this is.
    public var code: Code
    /// What went wrong, for a person to act on. Sent to the client, so it names no file path and
    /// carries no raw system text: those stay in ``underlyingError``, for the log.
    public var message: String
    /// The error that caused this one (a storage or system error), if any.
    public var underlyingError: (any Error)?

    /// Makes an error, keeping the error that caused it, if any.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        underlyingError = underlying
    }

    /// The status sent on the WebSocket.
    public var wireStatus: WireStatus {
        switch code {
        case .invalidArgument: .invalidArgs
        case .tooBig: .tooBig
        case .permissionDenied, .notAllowed: .permissionDenied
        case .storageFailed: .failure
        case .unavailable: .unavailable
        }
    }

    /// The HTTP status code for the REST API.
    public var httpStatus: Int {
        switch code {
        case .invalidArgument: 400
        case .tooBig: 413
        case .permissionDenied, .notAllowed: 401
        case .storageFailed: 500
        case .unavailable: 503
        }
    }

    /// The code, the message and the cause, for logs.
    public var description: String {
        "ServerError.\(code.rawValue): \(message)" + (underlyingError.map { " (caused by: \($0))" } ?? "")
    }
}
