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

    func encoded() -> [UInt8] {
        let object: [String: Any] = [
            "path": query.path.wireForm,
            "query": query.params.wireObject.jsonString(format: .plain),
            "lastUse": lastUse, "complete": isComplete, "active": isActive, "pinned": isPinned,
        ]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }

    static func decode(id: Int64, _ bytes: [UInt8]) throws -> TrackedQuery {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
              let path = object["path"] as? String, let queryText = object["query"] as? String,
              let lastUse = (object["lastUse"] as? NSNumber)?.int64Value,
              let complete = object["complete"] as? Bool, let active = object["active"] as? Bool,
              let pinned = object["pinned"] as? Bool
        else {
            throw StorageError(.invalidRecord, "tracked query \(id) is unreadable")
        }
        let params: QueryParams
        do {
            params = try QueryParams(wireObject: try Node(jsonString: queryText))
        } catch {
            throw StorageError(.invalidRecord, "tracked query \(id) holds an invalid query: \(error)")
        }
        let query = QuerySpec(path: TreePath(unchecked: path), params: params)
        return TrackedQuery(id: id, query: query, lastUse: lastUse, isComplete: complete, isActive: active, isPinned: pinned)
    }
}
