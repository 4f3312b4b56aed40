import CoreTree
import Presence
import QueryEngine

/// Snapshot metadata (``SnapshotMetadata``): whether a snapshot includes unacknowledged writes
/// and whether its data came from the server in this connection, and the metadata-only events
/// of observers that asked for them.
extension Repo {
    /// The metadata of data at `path` served by `query`'s view.
    func metadata(at path: TreePath, for query: QuerySpec) -> SnapshotMetadata {
        SnapshotMetadata(hasPendingWrites: hasPendingWrites(affecting: path), isFromCache: InfoTree.contains(path) ? false : !isSynced(query))
    }

    /// Whether an unacknowledged visible write touches `path`, above, at or below it.
    func hasPendingWrites(affecting path: TreePath) -> Bool {
        !InfoTree.contains(path) && syncTree.pendingWrites.hasVisibleWrites(affecting: path)
    }

    /// Whether the server sent `query`'s data in this connection: its own listen's, or a
    /// complete listen at or above its location.
    func isSynced(_ query: QuerySpec) -> Bool {
        if syncedQueries.contains(query) { return true }
        var path: TreePath? = query.path
        while let current = path {
            if syncedQueries.contains(.default(at: current)) { return true }
            path = current.parent
        }
        return false
    }

    /// Adds an event for each metadata observer whose last snapshot's metadata changed since it
    /// was delivered (the data is the same: a change of data raises its own event).
    func addMetadataChanges(to deliveries: inout [@Sendable () -> Void], database: Database) {
        for (registration, query) in metadataObservers.values {
            guard let last = registration.lastDelivered else { continue }
            let metadata = self.metadata(at: last.path, for: query)
            guard metadata != last.metadata else { continue }
            registration.lastDelivered = (last.node, last.path, last.index, metadata)
            let snapshot = DataSnapshot(node: last.node, ref: DatabaseReference(database: database, path: last.path), index: last.index, metadata: metadata)
            deliveries.append { registration.deliver(snapshot, previousSiblingKey: nil) }
        }
    }
}
