import CoreTree

/// The writes a connection asked to run when it ends (`o`, `om`), in the order given, minus the
/// ones cancelled (`oc`).
struct OnDisconnectQueue {
    private(set) var operations: [WriteOperation] = []

    mutating func add(_ operation: WriteOperation) { operations.append(operation) }

    /// Cancels the operations at `path` and below it.
    mutating func cancel(at path: TreePath) {
        operations.removeAll { path.contains($0.path) }
    }

    /// Hands out the operations once; the queue is empty afterwards.
    mutating func takeAll() -> [WriteOperation] {
        defer { operations = [] }
        return operations
    }
}
