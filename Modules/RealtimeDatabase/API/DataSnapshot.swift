public import CoreTree
public import Foundation
import QueryEngine

/// An immutable copy of the data at a location, as of one event (Firebase's `DataSnapshot`).
///
/// `value` is in Foundation form, so `snapshot.value as? Bool`, `as? TimeInterval`,
/// `as? [String: Any]` and `snapshot.value ?? "null"` work as they do with Firebase.
public final class DataSnapshot: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init, but its `value` is a Foundation tree (`Any`) the compiler cannot check.

    /// The data, as a node.
    public let node: Node
    /// The location the data is from.
    public let ref: DatabaseReference
    /// The order `children` iterates in (the query's).
    let index: QueryIndex
    /// Whether the data includes unacknowledged local writes and whether it comes from the
    /// cache (beyond Firebase). Child snapshots share their parent's.
    public let metadata: SnapshotMetadata

    init(node: Node, ref: DatabaseReference, index: QueryIndex = .priority, metadata: SnapshotMetadata = .server) {
        self.node = node
        self.ref = ref
        self.index = index
        self.metadata = metadata
    }

    /// The last path segment of the location; `nil` at the root.
    public var key: String { ref.key ?? "" }

    /// The data as Foundation values (`NSNull` when there is none): `Bool`, `NSNumber`, `String`,
    /// `[String: Any]`, or `[Any]` for array-like data. Priorities are left out.
    public var value: Any? { node.foundationValue() }

    /// The data with priorities, in the export format (`.value` / `.priority`).
    public func valueInExportFormat() -> Any? { node.foundationValue(exportFormat: true) }

    /// The priority: `NSNumber`, `String` or `nil`.
    public var priority: Any? {
        node.foundationPriority
    }

    /// Whether there is data here.
    public func exists() -> Bool { !node.isEmpty }

    /// The number of immediate children.
    public var childrenCount: UInt { UInt(node.childCount) }

    /// Whether the location has children.
    public func hasChildren() -> Bool { node.childCount > 0 }

    /// Whether there is data at the relative path `childPathString`.
    public func hasChild(_ childPathString: String) -> Bool {
        !node.child(at: DatabaseReference.validatedRelativePath(childPathString)).isEmpty
    }

    /// The snapshot of the data at a relative path (an empty snapshot when there is none).
    public func childSnapshot(forPath childPathString: String) -> DataSnapshot {
        let path = DatabaseReference.validatedRelativePath(childPathString)
        return DataSnapshot(node: node.child(at: path), ref: ref.child(path), index: .priority, metadata: metadata)
    }

    /// The immediate children, in the query's order, as ``DataSnapshot``s (cast each element:
    /// `for case let child as DataSnapshot in snapshot.children`).
    public var children: NSEnumerator {
        (childSnapshots as NSArray).objectEnumerator()
    }

    /// The immediate children, in the query's order.
    public var childSnapshots: [DataSnapshot] {
        var named = node.children.map { NamedNode(name: $0.key, node: $0.value) }
        if index != .key { named.sort { index.compare($0, $1) < 0 } }
        return named.map { DataSnapshot(node: $0.node, ref: ref.child(TreePath(keys: [$0.name])), index: .priority, metadata: metadata) }
    }

    /// The key and the data as JSON.
    public override var description: String {
        "DataSnapshot(key: \(key), value: \(node.jsonString(format: .plain)))"
    }
}
