public import CoreTree

/// What the sync tree needs from durable storage. The Persistence module implements it;
/// ``NoPersistence`` keeps everything in memory only.
public protocol PersistenceManaging: AnyObject {
    /// Saves a user set before it is applied, so it survives a restart; durable when it returns.
    /// A failure (disk full, say) means the write is not made at all.
    func saveUserOverwrite(path: TreePath, node: Node, writeId: Int64) throws
    /// Saves a user update before it is applied; durable when it returns.
    func saveUserMerge(path: TreePath, children: CompoundWrite, writeId: Int64) throws
    /// Forgets a user write once acknowledged or reverted.
    func removeUserWrite(writeId: Int64)
    /// Forgets every pending user write.
    func removeAllUserWrites()
    /// Applies an acknowledged write to the cached server data.
    func applyUserWriteToServerCache(path: TreePath, node: Node)
    /// Applies an acknowledged update to the cached server data.
    func applyUserWriteToServerCache(path: TreePath, merge: CompoundWrite)
    /// Records an acknowledged set: its data into the cached server data and, when `writeId` is
    /// given, its queue record removed. Implementations may do both in one commit.
    func acknowledgeUserOverwrite(path: TreePath, node: Node, removingWrite writeId: Int64?)
    /// The cached server data for a query, and whether it is known complete.
    func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool)
    /// Stores server data for a query.
    func updateServerCache(query: QuerySpec, node: Node)
    /// Stores a server merge.
    func updateServerCache(path: TreePath, merge: CompoundWrite)
    /// A listener started on the query.
    func setQueryActive(_ query: QuerySpec)
    /// The last listener of the query went away.
    func setQueryInactive(_ query: QuerySpec)
    /// The server has sent all the query's data.
    func setQueryComplete(_ query: QuerySpec)
}

extension PersistenceManaging {
    /// Applies the write to the cached data, then forgets it: two steps.
    public func acknowledgeUserOverwrite(path: TreePath, node: Node, removingWrite writeId: Int64?) {
        applyUserWriteToServerCache(path: path, node: node)
        if let writeId { removeUserWrite(writeId: writeId) }
    }
}

/// Persistence that keeps nothing: the engine runs in memory.
public final class NoPersistence: PersistenceManaging {
    /// Creates the no-op persistence.
    public init() {}
    public func saveUserOverwrite(path: TreePath, node: Node, writeId: Int64) {}
    public func saveUserMerge(path: TreePath, children: CompoundWrite, writeId: Int64) {}
    public func removeUserWrite(writeId: Int64) {}
    public func removeAllUserWrites() {}
    public func applyUserWriteToServerCache(path: TreePath, node: Node) {}
    public func applyUserWriteToServerCache(path: TreePath, merge: CompoundWrite) {}
    public func serverCache(for query: QuerySpec) -> (node: Node, complete: Bool) { (.empty, false) }
    public func updateServerCache(query: QuerySpec, node: Node) {}
    public func updateServerCache(path: TreePath, merge: CompoundWrite) {}
    public func setQueryActive(_ query: QuerySpec) {}
    public func setQueryInactive(_ query: QuerySpec) {}
    public func setQueryComplete(_ query: QuerySpec) {}
}
