public import CoreTree

/// A storage failure, with what went wrong, a message a person can act on, the engine's own
/// status where there is one, and the error that caused it, if any.
public struct StorageError: CodedError, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Code: Sendable, Hashable {
        /// Another process (or another handle in this one) has the store open.
        case inUse(pid: Int32?)
        /// The store's files are damaged or unreadable.
        case corrupt
        /// The store was written by a newer format than this library reads.
        case unsupportedFormat(found: Int, supported: Int)
        /// The disk (or the file size limit) is full; the batch that did not fit was not applied.
        case diskFull
        /// An I/O error from the operating system.
        case io
        /// The store was closed.
        case closed
        /// A key is longer than the backend accepts (the shared layer keeps keys below every limit).
        case keyTooLong(length: Int, limit: Int)
        /// No backend has that name.
        case unknownBackend(name: String, available: [String])
        /// A value could not be decoded.
        case invalidRecord
        /// Any other engine failure.
        case engine
    }

    /// What went wrong.
    public var code: Code
    /// A description of the failure and, where possible, what to do.
    public var message: String
    /// The backend's name (`"sqlite"`, `"lmdb"`, `"leveldb"`, `"memory"`), when known.
    public var backend: String?
    /// The engine's own status code (SQLite result code, LMDB error, errno), when there is one.
    public var engineStatus: Int32?
    /// The error that caused this one (a record's JSON error, the file system's error), if any.
    public var underlyingError: (any Error)?

    /// Creates an error, keeping the error that caused it, if any.
    public init(
        _ code: Code, _ message: String, backend: String? = nil, engineStatus: Int32? = nil, underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.backend = backend
        self.engineStatus = engineStatus
        underlyingError = underlying
    }

    /// What went wrong in a few words that name no file, path or system detail: safe to show
    /// to a remote client (the full ``description`` belongs in the log).
    public var summary: String {
        switch code {
        case .inUse: "the store is in use by another process"
        case .corrupt: "the store is damaged"
        case .unsupportedFormat: "the store was written by a newer version"
        case .diskFull: "the disk is full"
        case .io: "an I/O error occurred"
        case .closed: "the store is closed"
        case .keyTooLong: "a key is too long for the store"
        case .unknownBackend: "the storage backend is not available"
        case .invalidRecord: "a stored record could not be read"
        case .engine: "the storage engine failed"
        }
    }

    public var description: String {
        var text = backend.map { "\($0): " } ?? ""
        text += message
        if let engineStatus { text += " (status \(engineStatus))" }
        return text
    }
}
