public import CoreTree

/// The client's model of the database: one ``SyncPoint`` (set of views) per listened location,
/// the pending user writes, and the tags of query listens. Every user and server operation goes
/// through here and comes out as events for listeners.
///
/// Not thread-safe: one serial domain (the client's repo actor) owns it.
public final class SyncTree {
    private var syncPoints = ImmutableTree<SyncPoint>.empty
    /// The pending user writes.
    public private(set) var pendingWrites = WriteTree()
    private var queryToTag: [String: Int] = [:]
    private var tagToQuery: [Int: QuerySpec] = [:]
    private var nextTag = 1
    private let listenProvider: any ListenProvider
    private let persistence: any PersistenceManaging

    /// Creates a sync tree that listens through `listenProvider` and stores through `persistence`.
    public init(listenProvider: any ListenProvider, persistence: any PersistenceManaging = NoPersistence()) {
        self.listenProvider = listenProvider
        self.persistence = persistence
    }

    // MARK: - User operations

    /// Applies a user set; listeners see it at once.
    ///
    /// The sync tree owns the write's record in persistence: it saves it here (before anything
    /// changes, so a failed save changes nothing) and removes it when the write is acknowledged.
    ///
    /// - Parameters:
    ///   - node: what listeners see (server values already estimated).
    ///   - persist: save the write first; false when it is already saved (restored at launch) or
    ///     must not be (a transaction's attempt).
    ///   - stored: the form to save, when it differs from `node` (server-value placeholders unresolved).
    /// - Throws: the persistence error when the save fails; nothing is applied then.
    public func applyUserOverwrite(
        path: TreePath, node: Node, writeId: Int64, visible: Bool = true, persist: Bool = true, stored: Node? = nil
    ) throws -> [SyncEvent] {
        if persist { try persistence.saveUserOverwrite(path: path, node: stored ?? node, writeId: writeId) }
        pendingWrites.addOverwrite(path: path, node: node, writeId: writeId, visible: visible)
        guard visible else { return [] }
        return applyToSyncPoints(.overwrite(source: .user, path: path, node: node))
    }

    /// Applies a user update of several paths relative to `path`; saved and removed as
    /// ``applyUserOverwrite(path:node:writeId:visible:persist:stored:)`` describes.
    public func applyUserMerge(
        path: TreePath, children: [(path: TreePath, node: Node)], writeId: Int64, persist: Bool = true,
        stored: [(path: TreePath, node: Node)]? = nil
    ) throws -> [SyncEvent] {
        if persist { try persistence.saveUserMerge(path: path, children: CompoundWrite(writes: stored ?? children), writeId: writeId) }
        pendingWrites.addMerge(path: path, children: children, writeId: writeId)
        return applyToSyncPoints(.merge(source: .user, path: path, children: SyncTree.tree(from: children)))
    }

    /// The server acknowledged (or, with `revert`, rejected) a user write.
    public func ackUserWrite(writeId: Int64, revert: Bool = false, persist: Bool = true) -> [SyncEvent] {
        guard let write = pendingWrites.write(withId: writeId) else { return [] }
        let needsReevaluation = pendingWrites.removeWrite(writeId)
        if write.visible && !revert, let node = write.overwrite {
            persistence.acknowledgeUserOverwrite(path: write.path, node: node, removingWrite: persist ? writeId : nil)
        } else {
            if write.visible && !revert, let merge = write.merge {
                persistence.applyUserWriteToServerCache(path: write.path, merge: CompoundWrite(writes: merge))
            }
            if persist { persistence.removeUserWrite(writeId: writeId) }
        }
        guard needsReevaluation else { return [] }
        var affected = ImmutableTree<Bool>.empty
        if write.overwrite != nil {
            affected = affected.setting(.root, true)
        } else {
            for child in write.merge ?? [] { affected = affected.setting(child.path, true) }
        }
        return applyToSyncPoints(.ackUserWrite(path: write.path, affected: affected, revert: revert))
    }

    /// Drops every pending write, reverting what listeners saw.
    public func removeAllWrites() -> [SyncEvent] {
        persistence.removeAllUserWrites()
        let writes = pendingWrites.removeAllWrites()
        if writes.isEmpty { return [] }
        return applyToSyncPoints(.ackUserWrite(path: .root, affected: ImmutableTree<Bool>.empty.setting(.root, true), revert: true))
    }

    // MARK: - Server operations

    /// The server sent the data at `path`.
    public func applyServerOverwrite(path: TreePath, node: Node) -> [SyncEvent] {
        persistence.updateServerCache(query: .default(at: path), node: node)
        return applyToSyncPoints(.overwrite(source: .server, path: path, node: node))
    }

    /// The server sent data for several paths relative to `path`.
    public func applyServerMerge(path: TreePath, children: [(path: TreePath, node: Node)]) -> [SyncEvent] {
        persistence.updateServerCache(path: path, merge: CompoundWrite(writes: children))
        return applyToSyncPoints(.merge(source: .server, path: path, children: SyncTree.tree(from: children)))
    }

    /// The server finished the default listen at `path`.
    public func applyListenComplete(path: TreePath) -> [SyncEvent] {
        persistence.setQueryComplete(.default(at: path))
        return applyToSyncPoints(.listenComplete(source: .server, path: path))
    }

    /// The server finished the query listen with `tag`.
    public func applyTaggedListenComplete(path: TreePath, tag: Int) -> [SyncEvent] {
        guard let query = tagToQuery[tag], let relative = path.relative(to: query.path) else { return [] }
        persistence.setQueryComplete(query)
        return applyTagged(query, .listenComplete(source: .server(query: query.params), path: relative))
    }

    /// The server sent data at `path` for the query with `tag`.
    public func applyTaggedQueryOverwrite(path: TreePath, node: Node, tag: Int) -> [SyncEvent] {
        guard let query = tagToQuery[tag], let relative = path.relative(to: query.path) else { return [] }
        persistence.updateServerCache(query: relative.isRoot ? query : .default(at: path), node: node)
        return applyTagged(query, .overwrite(source: .server(query: query.params), path: relative, node: node))
    }

    /// The server sent a merge at `path` for the query with `tag`.
    public func applyTaggedQueryMerge(path: TreePath, children: [(path: TreePath, node: Node)], tag: Int) -> [SyncEvent] {
        guard let query = tagToQuery[tag], let relative = path.relative(to: query.path) else { return [] }
        persistence.updateServerCache(path: path, merge: CompoundWrite(writes: children))
        return applyTagged(query, .merge(source: .server(query: query.params), path: relative, children: SyncTree.tree(from: children)))
    }

    private func applyTagged(_ query: QuerySpec, _ operation: Operation) -> [SyncEvent] {
        guard let syncPoint = syncPoints.value(at: query.path) else {
            preconditionFailure("Missing sync point for query tag that we're tracking")
        }
        var events: [SyncEvent] = []
        syncPoint.apply(operation, writes: pendingWrites.childWrites(at: query.path), completeServerCache: nil, into: &events)
        return events
    }

    static func tree(from children: [(path: TreePath, node: Node)]) -> ImmutableTree<Node> {
        var tree = ImmutableTree<Node>.empty
        for child in children { tree = tree.setting(child.path, child.node) }
        return tree
    }

    // MARK: - Registrations

    /// Adds a listener for `query`, starting a server listen if nothing above already covers it.
    ///
    /// - Returns: the initial events for the new registration (child_added per cached child, and
    ///   value when the data is known complete), then any events the listen provider raised.
    public func addEventRegistration(_ registration: any EventRegistration, for query: QuerySpec, skipSetupListener: Bool = false) -> [SyncEvent] {
        let path = query.path
        var (serverCache, foundAncestorDefaultView) = serverCacheAbove(path)
        let syncPoint: SyncPoint
        if let existing = syncPoints.value(at: path) {
            syncPoint = existing
            foundAncestorDefaultView = foundAncestorDefaultView || existing.hasCompleteView
            serverCache = serverCache ?? existing.completeServerCache(at: .root)
        } else {
            syncPoint = SyncPoint()
            syncPoints = syncPoints.setting(path, syncPoint)
        }
        persistence.setQueryActive(query)
        let (cache, serverCacheComplete) = serverCache.map { ($0, true) } ?? storedServerCache(for: query)
        let viewExists = syncPoint.viewForQuery(query) != nil
        if !viewExists && !query.loadsAllData {
            precondition(queryToTag[query.key] == nil, "View does not exist, but we have a tag")
            let tag = nextTag
            nextTag += 1
            queryToTag[query.key] = tag
            tagToQuery[tag] = query
        }
        let writes = pendingWrites.childWrites(at: path)
        var events = syncPoint.addRegistration(
            registration, for: query, writes: writes, serverCache: cache, serverCacheComplete: serverCacheComplete)
        if !viewExists && !foundAncestorDefaultView && !skipSetupListener, let view = syncPoint.viewForQuery(query) {
            events += setUpListener(query, view)
        }
        return events
    }

    /// Removes a listener (every listener of the query when `registration` is `nil`). With a
    /// `cancelStatus` the listen failed on the server, and each registration hears why.
    ///
    /// - Returns: cancel events, if any.
    public func removeEventRegistration(
        _ registration: (any EventRegistration)?, for query: QuerySpec, cancelStatus: String? = nil
    ) -> [SyncEvent] {
        let path = query.path
        guard let syncPoint = syncPoints.value(at: path),
              query.identifier == "default" || syncPoint.viewForQuery(query) != nil
        else { return [] }
        let (removed, events) = syncPoint.removeRegistration(registration, for: query, cancelStatus: cancelStatus)
        if syncPoint.isEmpty { syncPoints = syncPoints.removing(path) }
        for removedQuery in removed { persistence.setQueryInactive(removedQuery) }
        let removingDefault = removed.contains { $0.loadsAllData }
        let covered = syncPoints.rootmostValue(on: path, where: { $0.hasCompleteView }) != nil
        if removingDefault && !covered {
            let subtree = syncPoints.subtreeOrEmpty(at: path)
            if !subtree.isEmpty {
                // Listens below were shadowed by the removed default listen: start them again.
                for view in SyncTree.distinctViews(in: subtree) {
                    let newQuery = view.query
                    let listener = makeListener(for: view)
                    _ = listenProvider.startListening(
                        newQuery.forListening, tag: queryToTag[newQuery.key], hash: listener.hash, onComplete: listener.onComplete)
                }
            }
        }
        if !covered && !removed.isEmpty && cancelStatus == nil {
            if removingDefault {
                listenProvider.stopListening(query.forListening, tag: nil)
            } else {
                for removedQuery in removed {
                    listenProvider.stopListening(removedQuery.forListening, tag: queryToTag[removedQuery.key])
                }
            }
        }
        for removedQuery in removed where !removedQuery.loadsAllData {
            if let tag = queryToTag.removeValue(forKey: removedQuery.key) { tagToQuery[tag] = nil }
        }
        return events
    }

    /// The tag of a query's listen, if it has one.
    public func tag(for query: QuerySpec) -> Int? { queryToTag[query.key] }

    /// The query whose listen has `tag`, if it is still active.
    public func query(forTag tag: Int) -> QuerySpec? { tagToQuery[tag] }

    /// What a one-time read of `query` can answer from the cache: the data a new listener of the
    /// query would receive as its value (pending writes applied, the query's filter too), or nil
    /// when neither memory nor persistence can vouch that the data is complete. Changes nothing:
    /// no view is added, no listen starts, no query is marked active.
    public func cachedValue(for query: QuerySpec) -> Node? {
        let path = query.path
        var (serverCache, _) = serverCacheAbove(path)
        let existing = syncPoints.value(at: path)
        if let view = existing?.viewForQuery(query) { return view.completeNode }
        serverCache = serverCache ?? existing?.completeServerCache(at: .root)
        let (cache, complete) = serverCache.map { ($0, true) } ?? storedServerCache(for: query)
        let view = (existing ?? SyncPoint()).makeView(
            for: query, writes: pendingWrites.childWrites(at: path), serverCache: cache, serverCacheComplete: complete)
        return view.completeNode
    }

    /// Complete server data for `path` held by a view at or above it, and whether a default
    /// (complete) view above covers it.
    private func serverCacheAbove(_ path: TreePath) -> (node: Node?, foundDefaultView: Bool) {
        var serverCache: Node?
        var foundDefaultView = false
        syncPoints.forEachOnPath(path) { pointPath, syncPoint in
            let relative = path.relative(to: pointPath)!
            serverCache = serverCache ?? syncPoint.completeServerCache(at: relative)
            foundDefaultView = foundDefaultView || syncPoint.hasCompleteView
            return true
        }
        return (serverCache, foundDefaultView)
    }

    /// The server data persistence holds for `query`, filled in with complete data the views
    /// below hold when persistence cannot vouch for all of it.
    private func storedServerCache(for query: QuerySpec) -> (node: Node, complete: Bool) {
        let persisted = persistence.serverCache(for: query)
        if persisted.complete { return (persisted.node, true) }
        var partial = persisted.node
        for (childKey, childPoint) in syncPoints.subtreeOrEmpty(at: query.path).children {
            if let complete = childPoint.value?.completeServerCache(at: .root) {
                partial = partial.updatingImmediateChild(childKey, to: complete)
            }
        }
        return (partial, false)
    }

    /// The data at `path` as listeners would see it, including hidden writes, excluding
    /// `excludedWriteIds`; used by transactions. The empty node when nothing is known.
    public func calcCompleteEventCache(path: TreePath, excluding excludedWriteIds: [Int64] = []) -> Node {
        var serverCache: Node?
        syncPoints.forEachOnPath(path) { pointPath, syncPoint in
            serverCache = syncPoint.completeServerCache(at: path.relative(to: pointPath)!)
            return serverCache == nil
        }
        return pendingWrites.calcCompleteEventCache(
            at: path, completeServerCache: serverCache, excluding: excludedWriteIds, includeHiddenWrites: true) ?? .empty
    }

    // MARK: - Applying operations

    private func applyToSyncPoints(_ operation: Operation) -> [SyncEvent] {
        var events: [SyncEvent] = []
        SyncTree.applyHelper(operation, syncPoints, serverCache: nil, writes: pendingWrites.childWrites(at: .root), into: &events)
        return events
    }

    /// Applies `operation` to the sync points on its path and below it, appending their events.
    private static func applyHelper(
        _ operation: Operation, _ tree: ImmutableTree<SyncPoint>, serverCache: Node?, writes: WriteTreeRef, into events: inout [SyncEvent]
    ) {
        if operation.path.isRoot {
            applyDescendantsHelper(operation, tree, serverCache: serverCache, writes: writes, into: &events)
            return
        }
        let syncPoint = tree.value
        let serverCache = serverCache ?? syncPoint?.completeServerCache(at: .root)
        let childName = operation.path.firstKey!
        if let childTree = tree.children[childName], let childOperation = operation.forChild(childName) {
            applyHelper(
                childOperation, childTree, serverCache: serverCache?.immediateChild(childName), writes: writes.child(childName),
                into: &events)
        }
        syncPoint?.apply(operation, writes: writes, completeServerCache: serverCache, into: &events)
    }

    private static func applyDescendantsHelper(
        _ operation: Operation, _ tree: ImmutableTree<SyncPoint>, serverCache: Node?, writes: WriteTreeRef, into events: inout [SyncEvent]
    ) {
        let syncPoint = tree.value
        let serverCache = serverCache ?? syncPoint?.completeServerCache(at: .root)
        for (childName, childTree) in tree.children {
            if let childOperation = operation.forChild(childName) {
                applyDescendantsHelper(
                    childOperation, childTree, serverCache: serverCache?.immediateChild(childName), writes: writes.child(childName),
                    into: &events)
            }
        }
        syncPoint?.apply(operation, writes: writes, completeServerCache: serverCache, into: &events)
    }

    // MARK: - Listens

    private func makeListener(for view: View) -> (hash: () -> String, onComplete: (ListenOutcome) -> [SyncEvent]) {
        let query = view.query
        let tag = queryToTag[query.key]
        let hash = { [weak view] in view?.serverCache.hash ?? "" }
        let onComplete = { [weak self] (outcome: ListenOutcome) -> [SyncEvent] in
            guard let self else { return [] }
            switch outcome {
            case .complete:
                if let tag { return self.applyTaggedListenComplete(path: query.path, tag: tag) }
                return self.applyListenComplete(path: query.path)
            case .cancelled(let reason):
                // A failed listen cancels every listener at the location, not only the one that asked.
                return self.removeEventRegistration(nil, for: query, cancelStatus: reason)
            }
        }
        return (hash, onComplete)
    }

    private func setUpListener(_ query: QuerySpec, _ view: View) -> [SyncEvent] {
        let tag = queryToTag[query.key]
        let listener = makeListener(for: view)
        let events = listenProvider.startListening(query.forListening, tag: tag, hash: listener.hash, onComplete: listener.onComplete)
        if tag == nil {
            // A default listen shadows every listen at or below this location: stop those.
            let subtree = syncPoints.subtreeOrEmpty(at: query.path)
            let queriesToStop: [QuerySpec] = subtree.fold { relativePath, syncPoint, childResults in
                if !relativePath.isRoot, let syncPoint, let complete = syncPoint.completeView { return [complete.query] }
                var queries = syncPoint?.queryViews.map(\.query) ?? []
                for (_, childQueries) in childResults { queries += childQueries }
                return queries
            }
            for queryToStop in queriesToStop {
                listenProvider.stopListening(queryToStop.forListening, tag: queryToTag[queryToStop.key])
            }
        }
        return events
    }

    private static func distinctViews(in subtree: ImmutableTree<SyncPoint>) -> [View] {
        subtree.fold { _, syncPoint, childResults in
            if let syncPoint, let complete = syncPoint.completeView { return [complete] }
            var views = syncPoint?.queryViews ?? []
            for (_, childViews) in childResults { views += childViews }
            return views
        }
    }
}
