import CoreTree

/// One `runTransactionBlock` call while it is queued, sent, or being retried.
final class TransactionRecord {
    enum Status {
        /// Run locally; waiting to be sent (offline, or behind an overlapping transaction).
        case waiting
        /// Sent as a compare-and-set; waiting for the server's answer.
        case sent
        /// Sent, but a set at its location has since replaced it: abort on the answer.
        case sentNeedsAbort
    }

    typealias Update = (MutableData) -> TransactionResult
    typealias Completion = @Sendable (DatabaseError?, Bool, DataSnapshot?) -> Void

    /// An app's completion block as the client calls it (on the callback queue).
    static func completion(_ block: (((any Error)?, Bool, DataSnapshot?) -> Void)?) -> Completion? {
        guard let block else { return nil }
        let box = UncheckedBox(block)
        return { error, committed, snapshot in box.value(error, committed, snapshot) }
    }

    /// The most compare-and-set attempts (the Firebase clients' limit).
    static let maxRetries = 25

    /// A named transaction's identity: kept in the write queue under `sequence` (also its
    /// exactly-once stamp), so it runs again after a restart and is applied once.
    struct Named {
        let name: String
        let arguments: Node
        let sequence: Int64
    }

    let id: Int
    let path: TreePath
    /// Set for ``DatabaseReference/runTransaction(named:arguments:andCompletionBlock:)``.
    let named: Named?
    let update: Update
    let completion: Completion?
    let applyLocally: Bool
    /// The hidden value observer that keeps the location's data current while the transaction lives.
    let registration: ObserverRegistration
    var status = Status.waiting
    var retries = 0
    /// The id of its local write (the latest run's).
    var writeId: Int64 = 0
    /// The data the latest run started from.
    var input = Node.empty
    /// The latest run's result, server values unresolved.
    var output = Node.empty
    /// `output` with its server values resolved by the local clock: what the transaction
    /// committed, as its completion reports it.
    var resolvedOutput = Node.empty

    init(id: Int, path: TreePath, update: @escaping Update, completion: Completion?, applyLocally: Bool, registration: ObserverRegistration,
         named: Named? = nil) {
        self.id = id
        self.path = path
        self.named = named
        self.update = update
        self.completion = completion
        self.applyLocally = applyLocally
        self.registration = registration
    }

    /// Whether this transaction and `other` touch overlapping data.
    func overlaps(_ other: TreePath) -> Bool { path.contains(other) || other.contains(path) }
}
