import SyncProtocol
import CoreTree

/// What identifies a listen: its path and canonical query id.
struct ListenKey: Hashable, Sendable {
    let path: TreePath
    let identifier: String

    init(_ request: ListenRequest) {
        path = request.path
        identifier = request.identifier
    }
}
