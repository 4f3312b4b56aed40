package import CoreTree

/// The writes a connection asked to run when it ends (`o`, `om`), in the order given, minus the
/// ones cancelled (`oc`) or overwritten, with the bytes they hold and the caller that registered
/// them (whose rights the rules check again when they run).
package struct OnDisconnectQueue {
    /// An empty queue.
    package init() {}

    package private(set) var operations: [(operation: WriteOperation, caller: Caller, bytes: Int)] = []
    /// The bytes held, as the requests were sent.
    package private(set) var bytes = 0

    /// Queues `operation` (sent in `bytes` bytes) unless that would pass `limit` bytes.
    ///
    /// A set replaces the queued writes at its path and below, which it would overwrite when the
    /// queue runs, so a client re-registering the same write holds it once.
    package mutating func add(_ operation: WriteOperation, as caller: Caller, bytes size: Int, limit: Int) -> Bool {
        let replaces: (WriteOperation) -> Bool = { queued in
            if case .set = operation { return operation.path.contains(queued.path) }
            return false
        }
        let freed = operations.reduce(0) { $0 + (replaces($1.operation) ? $1.bytes : 0) }
        guard bytes - freed + size <= limit else { return false }
        remove(where: replaces)
        operations.append((operation, caller, size))
        bytes += size
        return true
    }

    /// Cancels the operations at `path` and below it.
    package mutating func cancel(at path: TreePath) {
        remove { path.contains($0.path) }
    }

    private mutating func remove(where shouldRemove: (WriteOperation) -> Bool) {
        operations.removeAll { entry in
            guard shouldRemove(entry.operation) else { return false }
            bytes -= entry.bytes
            return true
        }
    }

    /// Hands out the operations once; the queue is empty afterwards.
    package mutating func takeAll() -> [(operation: WriteOperation, caller: Caller)] {
        defer {
            operations = []
            bytes = 0
        }
        return operations.map { ($0.operation, $0.caller) }
    }
}
