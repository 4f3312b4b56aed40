import CoreTree
import Foundation
public import QueryEngine

/// A query the cache holds data for, with what eviction needs to know about it.
public struct TrackedQuery: Sendable, Equatable {
    /// The query's id in the store.
    public var id: Int64
    /// The query (queries that load all data are kept as the default query at their path).
    public var query: QuerySpec
    /// When a listener last started or stopped on it, in milliseconds since 1970.
    public var lastUse: Int64
    /// Whether the server has sent all its data.
    public var isComplete: Bool
    /// Whether a listener is on it now.
    public var isActive: Bool
    /// Whether it is kept synced (`keepSynced(true)`): never evicted, across restarts too.
    public var isPinned: Bool

    /// A tracked query.
    public init(id: Int64, query: QuerySpec, lastUse: Int64, isComplete: Bool, isActive: Bool, isPinned: Bool) {
        self.id = id
        self.query = query
        self.lastUse = lastUse
        self.isComplete = isComplete
        self.isActive = isActive
        self.isPinned = isPinned
    }

    /// Whether eviction may remove it.
    public var isPrunable: Bool { !isActive && !isPinned }

    /// The bytes stored for the query.
    package func encoded() -> [UInt8] {
        var record = Node.empty
        func set(_ key: ChildKey, _ leaf: LeafValue) { record = record.updatingImmediateChild(key, to: Node(leaf)) }
        set("path", .string(query.path.wireForm))
        set("query", .string(query.params.wireObject.jsonString(format: .plain)))
        set("lastUse", .number(Double(lastUse)))
        set("complete", .bool(isComplete))
        set("active", .bool(isActive))
        set("pinned", .bool(isPinned))
        return Array(record.jsonString(format: .plain).utf8)
    }

    /// The tracked query stored as `bytes` under `id`.
    ///
    /// - Throws: ``StorageError`` `invalidRecord` when the bytes are not a tracked query.
    package static func decode(id: Int64, _ bytes: [UInt8]) throws -> TrackedQuery {
        let record = try? Node(json: bytes)
        func field(_ key: ChildKey) -> LeafValue? { record?.immediateChild(key).leafValue }
        guard case .string(let path)? = field("path"), case .string(let queryText)? = field("query"),
              case .number(let lastUseNumber)? = field("lastUse"), let lastUse = Int64(exactly: lastUseNumber),
              case .bool(let complete)? = field("complete"), case .bool(let active)? = field("active"),
              case .bool(let pinned)? = field("pinned")
        else {
            throw StorageError(.invalidRecord, "tracked query \(id) is unreadable")
        }
        let params: QueryParams
        do {
            params = try QueryParams(wireObject: try Node(jsonString: queryText))
        } catch {
            throw StorageError(
                .invalidRecord,
                "tracked query \(id) holds a query that cannot be read; reopening the store with StoreRecovery moves it aside and keeps the queued writes.",
                underlying: error)
        }
        let query = QuerySpec(path: TreePath(unchecked: path), params: params)
        return TrackedQuery(id: id, query: query, lastUse: lastUse, isComplete: complete, isActive: active, isPinned: pinned)
    }
}
