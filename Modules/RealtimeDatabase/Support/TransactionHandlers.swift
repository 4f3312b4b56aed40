import Foundation
import Synchronization

/// The named transaction handlers an app registered (``Database/registerTransaction(named:_:completion:)``).
final class TransactionHandlers: Sendable {
    /// A handler: the current data and the arguments given to `runTransaction(named:arguments:)`.
    typealias Handler = (MutableData, Any?) -> TransactionResult

    /// `@unchecked Sendable`: the handler is the app's non-`Sendable` block, and it runs on the
    /// client's serial queue only, as a `runTransactionBlock` block does.
    struct Entry: @unchecked Sendable {
        let handler: Handler
        /// Hears how transactions restored from disk ended (their callers' completions are gone).
        let restoredCompletion: TransactionRecord.Completion?
    }

    private let entries = Mutex<[String: Entry]>([:])

    func register(_ name: String, _ entry: Entry) {
        entries.withLock { $0[name] = entry }
    }

    func entry(named name: String) -> Entry? {
        entries.withLock { $0[name] }
    }

    /// Whether `name` can be a handler's name: 1 to 256 characters, none of them control characters.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 256 && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
