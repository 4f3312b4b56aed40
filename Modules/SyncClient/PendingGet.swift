import SyncProtocol
import CoreTree

/// A one-shot read waiting to be sent or answered.
struct PendingGet: Sendable {
    /// Where to read.
    let path: TreePath
    /// The wire query object.
    let query: Node
    /// Called once with the data or the server's refusal.
    let onComplete: @Sendable (Result<Node, RequestFailure>) -> Void
}
