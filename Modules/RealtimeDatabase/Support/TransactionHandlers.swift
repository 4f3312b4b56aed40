import Foundation

/// The named transaction handlers an app registered (``Database/registerTransaction(named:_:completion:)``).
///
/// `@unchecked Sendable`: the table is guarded by `lock`; a handler runs on the client's serial
/// queue only, as a `runTransactionBlock` block does.
final class TransactionHandlers: @unchecked Sendable {
    /// A handler: the current data and the arguments given to `runTransaction(named:arguments:)`.
    typealias Handler = (MutableData, Any?) -> TransactionResult

    struct Entry {
        let handler: Handler
        /// Hears how transactions restored from disk ended (their callers' completions are gone).
        let restoredCompletion: TransactionRecord.Completion?
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]

    func register(_ name: String, _ entry: Entry) {
        lock.withLock { entries[name] = entry }
    }

    func entry(named name: String) -> Entry? {
        lock.withLock { entries[name] }
    }

    /// Whether `name` can be a handler's name: 1 to 256 characters, none of them control characters.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 256 && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
