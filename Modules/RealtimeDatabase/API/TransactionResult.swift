public import Foundation

/// What a transaction block returns: commit the new data, or abort (Firebase's `TransactionResult`).
// @unchecked: immutable; the MutableData it carries is only touched by the transaction block's thread.
public final class TransactionResult: NSObject, @unchecked Sendable {
    /// The data to commit, or `nil` to abort.
    let value: MutableData?

    private init(value: MutableData?) {
        self.value = value
    }

    /// Commit `value`'s data.
    public static func success(withValue value: MutableData) -> TransactionResult {
        TransactionResult(value: value)
    }

    /// Abort the transaction; nothing is written.
    public static func abort() -> TransactionResult {
        TransactionResult(value: nil)
    }

    /// Whether the block chose to commit.
    public var isSuccess: Bool { value != nil }
}
