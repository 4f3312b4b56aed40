public import CoreTree

/// One pending user write.
public struct UserWriteRecord: Sendable {
    /// The write's id, increasing in the order writes were made.
    public var writeId: Int64
    /// Where the write applies.
    public var path: TreePath
    /// For a set: the data written.
    public var overwrite: Node?
    /// For an update: the data written at each path relative to `path`.
    public var merge: [(path: TreePath, node: Node)]?
    /// Whether listeners see the write (transactions may write invisibly).
    public var visible: Bool

    /// Whether the write covers all of `other`.
    func covers(_ other: TreePath) -> Bool {
        // Every path this write sets lies at or below `path`: nothing outside it is covered.
        guard path.contains(other) else { return false }
        if overwrite != nil { return true }
        return merge?.contains { path.appending($0.path).contains(other) } ?? false
    }

    /// Whether some path this write sets lies at, above or below a path `other` sets.
    func overlaps(_ other: UserWriteRecord) -> Bool {
        // Each write's targets lie at or below its path, so writes at unrelated paths cannot
        // overlap: answer without building the target lists (acknowledging a write compares it
        // with every pending one).
        guard path.contains(other.path) || other.path.contains(path) else { return false }
        if overwrite != nil && other.overwrite != nil { return true }
        let otherTargets = other.targetPaths
        return targetPaths.contains { target in otherTargets.contains { $0.contains(target) || target.contains($0) } }
    }

    /// The paths the write sets: its path for a set, each child's full path for an update.
    var targetPaths: [TreePath] {
        if overwrite != nil { return [path] }
        return merge?.map { path.appending($0.path) } ?? []
    }
}

/// The user's pending writes, layered over server data so listeners see them at once and see the
/// server's data again if a write is rejected.
///
/// The writes are indexed by id and by path: acknowledging, reverting and reading touch only the
/// writes at, above and below the path concerned, so draining a long queue is linear in its
/// length (Firebase's clients scan every pending write on each acknowledgement).
public struct WriteTree: Sendable {
    /// The pending writes by id.
    private var records: [Int64: UserWriteRecord] = [:]
    /// Pending write ids in increasing order from `head`; ids removed out of order stay until
    /// the next compaction (their records are gone).
    private var order: [Int64] = []
    private var head = 0
    /// The pending writes by the path they were made at.
    private var byPath = WritePathIndex()
    /// The visible writes merged into one compound write.
    var visibleWrites = CompoundWrite.empty
    private var lastWriteId: Int64 = -1

    /// An empty write tree.
    public init() {}

    /// The pending writes in write-id order (O(n): for inspection and tests).
    public var allWrites: [UserWriteRecord] { order[head...].compactMap { records[$0] } }

    /// The number of pending writes.
    public var count: Int { records.count }

    /// The id of the oldest pending write (the smallest), `nil` when none is pending.
    ///
    /// - Complexity: O(1): settled ids at the front of the order are dropped as writes go.
    public var oldestWriteId: Int64? { head < order.count ? order[head] : nil }

    /// Records a set. Write ids must increase.
    public mutating func addOverwrite(path: TreePath, node: Node, writeId: Int64, visible: Bool) {
        precondition(writeId > lastWriteId, "Stacking an older write on top of newer ones")
        add(UserWriteRecord(writeId: writeId, path: path, overwrite: node, merge: nil, visible: visible))
        if visible { visibleWrites = visibleWrites.addingWrite(at: path, node) }
    }

    /// Records an update (a merge of several paths). Write ids must increase.
    public mutating func addMerge(path: TreePath, children: [(path: TreePath, node: Node)], writeId: Int64) {
        precondition(writeId > lastWriteId, "Stacking an older merge on top of newer ones")
        add(UserWriteRecord(writeId: writeId, path: path, overwrite: nil, merge: children, visible: true))
        for child in children { visibleWrites = visibleWrites.addingWrite(at: path.appending(child.path), child.node) }
    }

    private mutating func add(_ record: UserWriteRecord) {
        records[record.writeId] = record
        if let last = order.last, last > record.writeId {
            // Below a settled id still in `order` (ids above every pending one are allowed again
            // after a rebuild): keep `order` sorted.
            order.insert(record.writeId, at: order[head...].firstIndex { $0 > record.writeId } ?? order.endIndex)
        } else {
            order.append(record.writeId)
        }
        byPath.insert(record.writeId, at: record.path)
        lastWriteId = record.writeId
    }

    /// The pending write with `writeId`.
    public func write(withId writeId: Int64) -> UserWriteRecord? { records[writeId] }

    /// The pending writes made at, above or below `path`, in write-id order.
    func writes(touching path: TreePath) -> [UserWriteRecord] {
        byPath.ids(touching: path).sorted().compactMap { records[$0] }
    }

    /// Removes a write (acknowledged or reverted), in any order.
    ///
    /// - Returns: whether listeners may see a difference (`false` when a later visible write
    ///   fully shadowed the removed one).
    public mutating func removeWrite(_ writeId: Int64) -> Bool {
        guard let removed = records.removeValue(forKey: writeId) else {
            preconditionFailure("removeWrite called with a nonexistent write id \(writeId)")
        }
        byPath.remove(writeId, at: removed.path)
        dropSettledIds()
        guard removed.visible else { return false }
        // A write below an older write's leaf turned that leaf into an object in the compound
        // write, so it changed data outside its own path: then it is never simply invisible.
        let (above, branch) = byPath.lookup(removed.path)
        let belowOlderWrite = above.contains { $0 < writeId && records[$0]?.visible == true }
        // Shadowed by a newer visible write at its path or above that covers it: nothing to
        // rebuild. Found from the newest down, without gathering every write at the path (a
        // queue of thousands of writes at one path drained in quadratic time).
        if !belowOlderWrite, isShadowed(removed, candidates: (branch?.ids ?? []).reversed())
            || isShadowed(removed, candidates: above.reversed()) {
            return false
        }
        // Only writes at, above or below the removed one's path can share its data.
        let related = writes(touching: removed.path)
        var overlaps = false
        for current in related.reversed() where current.visible {
            if removed.path.contains(current.path) || current.overlaps(removed) {
                // Either we're covering some writes or they're covering part of us (depending
                // on which came first); the compound write merged them, so rebuild its data at
                // the removed write's path from the writes there.
                overlaps = true
            }
        }
        if overlaps {
            // Rebuild from the highest pending write at or above the path: a write below a leaf
            // turned that leaf into an object in the compound write, which only the writes at the
            // leaf's own path can undo.
            let top = related.lazy.map(\.path).filter { $0.contains(removed.path) }.min { $0.depth < $1.depth } ?? removed.path
            let layered = WriteTree.layer(top == removed.path ? related : writes(touching: top), at: top) { $0.visible }
            visibleWrites = visibleWrites.removingWrite(at: top).addingWrites(at: top, layered)
            lastWriteId = order[head...].last { records[$0] != nil } ?? -1
        } else if removed.overwrite != nil {
            visibleWrites = visibleWrites.removingWrite(at: removed.path)
        } else {
            for child in removed.merge ?? [] {
                visibleWrites = visibleWrites.removingWrite(at: removed.path.appending(child.path))
            }
        }
        return true
    }

    /// Whether a visible write among `candidates` (ids, newest first) newer than `removed` covers its path.
    private func isShadowed(_ removed: UserWriteRecord, candidates: some Sequence<Int64>) -> Bool {
        for id in candidates {
            // An older write cannot shadow it.
            guard id > removed.writeId else { continue }
            if let current = records[id], current.visible, current.covers(removed.path) { return true }
        }
        return false
    }

    /// Forgets the ids at the front of `order` whose writes are gone, and compacts it when
    /// most of it is gone.
    private mutating func dropSettledIds() {
        while head < order.count && records[order[head]] == nil { head += 1 }
        if head == order.count {
            order.removeAll(keepingCapacity: true)
            head = 0
        } else if order.count > 1024 && (order.count - records.count) * 2 > order.count {
            // More than half of `order` is settled ids (before `head`, or removed out of order).
            order = order[head...].filter { records[$0] != nil }
            head = 0
        }
    }

    /// Removes every pending write.
    public mutating func removeAllWrites() -> [UserWriteRecord] {
        let writes = allWrites
        records = [:]
        order = []
        head = 0
        byPath = WritePathIndex()
        visibleWrites = .empty
        return writes
    }

    /// Whether a visible write sets data at, above or below `path` (in time proportional to the
    /// path's depth, not to the number of writes).
    public func hasVisibleWrites(affecting path: TreePath) -> Bool { !visibleWrites.childCompoundWrite(at: path).isEmpty }

    /// The data the visible writes fully determine at `path`, if they do.
    public func completeWriteData(at path: TreePath) -> Node? { visibleWrites.completeNode(at: path) }

    /// The write tree as seen from `path`.
    public func childWrites(at path: TreePath) -> WriteTreeRef { WriteTreeRef(path: path, tree: self) }

    /// Layers the writes accepted by `include` into one compound write relative to `root`.
    static func layer(_ writes: [UserWriteRecord], at root: TreePath, include: (UserWriteRecord) -> Bool) -> CompoundWrite {
        var result = CompoundWrite.empty
        for write in writes where include(write) {
            var targets: [(TreePath, Node)] = []
            if let node = write.overwrite {
                targets = [(write.path, node)]
            } else if let merge = write.merge {
                targets = merge.map { (write.path.appending($0.path), $0.node) }
            }
            for (path, node) in targets {
                if let relative = path.relative(to: root) {
                    result = result.addingWrite(at: relative, node)
                } else if let relative = root.relative(to: path) {
                    result = result.addingWrite(at: .root, node.child(at: relative))
                }
            }
        }
        return result
    }

    // MARK: - Calculations at a path

    func calcCompleteEventCache(
        at treePath: TreePath, completeServerCache: Node?, excluding writeIds: [Int64] = [], includeHiddenWrites: Bool = false
    ) -> Node? {
        if writeIds.isEmpty && !includeHiddenWrites {
            if let shadowing = visibleWrites.completeNode(at: treePath) { return shadowing }
            let subMerge = visibleWrites.childCompoundWrite(at: treePath)
            if subMerge.isEmpty { return completeServerCache }
            if completeServerCache == nil && !subMerge.hasCompleteWrite(at: .root) { return nil }
            return subMerge.apply(to: completeServerCache ?? .empty)
        }
        let merge = visibleWrites.childCompoundWrite(at: treePath)
        if !includeHiddenWrites && merge.isEmpty { return completeServerCache }
        if !includeHiddenWrites && completeServerCache == nil && !merge.hasCompleteWrite(at: .root) { return nil }
        let layered = WriteTree.layer(writes(touching: treePath), at: treePath) { write in
            (write.visible || includeHiddenWrites) && !writeIds.contains(write.writeId)
        }
        return layered.apply(to: completeServerCache ?? .empty)
    }

    func calcCompleteEventChildren(at treePath: TreePath, completeServerChildren: Node?) -> Node {
        var result = Node.empty
        if let topLevelSet = visibleWrites.completeNode(at: treePath) {
            if !topLevelSet.isLeaf {
                for (key, child) in topLevelSet.children { result = result.updatingImmediateChild(key, to: child) }
            }
            return result
        }
        let merge = visibleWrites.childCompoundWrite(at: treePath)
        if let completeServerChildren {
            for (key, child) in completeServerChildren.children {
                let node = merge.childCompoundWrite(at: TreePath(keys: [key])).apply(to: child)
                result = result.updatingImmediateChild(key, to: node)
            }
        }
        for child in merge.completeChildren { result = result.updatingImmediateChild(child.key, to: child.node) }
        return result
    }

    /// The event data at `childPath` below `treePath` after the server changed it, given the new
    /// server data there; `nil` when a pending write hides the path completely.
    func calcEventCacheAfterServerOverwrite(at treePath: TreePath, childPath: TreePath, serverNode: Node) -> Node? {
        let path = treePath.appending(childPath)
        if visibleWrites.hasCompleteWrite(at: path) { return nil }
        let childMerge = visibleWrites.childCompoundWrite(at: path)
        return childMerge.isEmpty ? serverNode : childMerge.apply(to: serverNode)
    }

    func calcCompleteChild(at treePath: TreePath, key: ChildKey, serverCache: CacheNode) -> Node? {
        let path = treePath.child(key)
        if let shadowing = visibleWrites.completeNode(at: path) { return shadowing }
        guard serverCache.isComplete(forChild: key) else { return nil }
        return visibleWrites.childCompoundWrite(at: path).apply(to: serverCache.node.node.immediateChild(key))
    }

    func shadowingWrite(at path: TreePath) -> Node? { visibleWrites.completeNode(at: path) }

    func calcIndexedSlice(
        at treePath: TreePath, completeServerData: Node?, start: NamedNode, count: Int, reverse: Bool, index: QueryIndex
    ) -> [NamedNode] {
        let merge = visibleWrites.childCompoundWrite(at: treePath)
        let toIterate: Node
        if let shadowing = merge.completeNode(at: .root) {
            toIterate = shadowing
        } else if let completeServerData {
            toIterate = merge.apply(to: completeServerData)
        } else {
            return []
        }
        if toIterate.isEmpty || toIterate.isLeaf { return [] }
        return WriteTree.slice(IndexedNode(toIterate, index: index), start: start, count: count, reverse: reverse)
    }

    /// As ``calcIndexedSlice(at:completeServerData:start:count:reverse:index:)`` over server data
    /// already indexed; no re-indexing when no write touches the location.
    func calcIndexedSlice(at treePath: TreePath, indexed: IndexedNode, start: NamedNode, count: Int, reverse: Bool) -> [NamedNode] {
        let merge = visibleWrites.childCompoundWrite(at: treePath)
        if !merge.isEmpty {
            return calcIndexedSlice(
                at: treePath, completeServerData: indexed.node, start: start, count: count, reverse: reverse, index: indexed.index)
        }
        if indexed.node.isEmpty || indexed.node.isLeaf { return [] }
        return WriteTree.slice(indexed, start: start, count: count, reverse: reverse)
    }

    private static func slice(_ indexed: IndexedNode, start: NamedNode, count: Int, reverse: Bool) -> [NamedNode] {
        let index = indexed.index
        let startKey = index.key(for: start)
        var nodes: [NamedNode] = []
        indexed.forEachChild(from: startKey, reversed: reverse) { next in
            if IndexKey.compare(index.key(for: next), startKey) != 0 { nodes.append(next) }
            return nodes.count < count
        }
        return nodes
    }
}

/// The write tree seen from one location, as a view uses it.
public struct WriteTreeRef: Sendable {
    /// The location.
    public let path: TreePath
    let tree: WriteTree

    func calcCompleteEventCache(_ completeServerCache: Node?, excluding writeIds: [Int64] = [], includeHiddenWrites: Bool = false) -> Node? {
        tree.calcCompleteEventCache(at: path, completeServerCache: completeServerCache, excluding: writeIds, includeHiddenWrites: includeHiddenWrites)
    }

    func calcCompleteEventChildren(_ completeServerChildren: Node?) -> Node {
        tree.calcCompleteEventChildren(at: path, completeServerChildren: completeServerChildren)
    }

    func calcEventCacheAfterServerOverwrite(_ childPath: TreePath, serverNode: Node) -> Node? {
        tree.calcEventCacheAfterServerOverwrite(at: path, childPath: childPath, serverNode: serverNode)
    }

    func shadowingWrite(_ childPath: TreePath) -> Node? { tree.shadowingWrite(at: path.appending(childPath)) }

    func calcIndexedSlice(_ completeServerData: Node?, start: NamedNode, count: Int, reverse: Bool, index: QueryIndex) -> [NamedNode] {
        tree.calcIndexedSlice(at: path, completeServerData: completeServerData, start: start, count: count, reverse: reverse, index: index)
    }

    func calcIndexedSlice(indexed: IndexedNode, start: NamedNode, count: Int, reverse: Bool) -> [NamedNode] {
        tree.calcIndexedSlice(at: path, indexed: indexed, start: start, count: count, reverse: reverse)
    }

    func calcCompleteChild(_ key: ChildKey, serverCache: CacheNode) -> Node? {
        tree.calcCompleteChild(at: path, key: key, serverCache: serverCache)
    }

    func child(_ key: ChildKey) -> WriteTreeRef { WriteTreeRef(path: path.child(key), tree: tree) }
}
