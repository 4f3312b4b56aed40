public import CoreTree
public import QueryEngine
import SecurityRules

/// Reads, listens, and judging listens again.
extension NamespaceDatabase {
    /// The data at `path`, filtered by `params`, loaded from the store when it is not in memory.
    ///
    /// - Throws: ``ServerError`` `permissionDenied` when the rules do not let `caller` read it,
    ///   `tooBig` when the data there exceeds 256 MB (Firebase's limit for one answer).
    public func read(_ path: TreePath, params: QueryParams = .default, as caller: Caller) async throws(ServerError) -> Node {
        try refuseIfDamaged()
        await startTurn()
        defer { endTurn() }
        try await authorizeInTurn(path, params: params, as: caller)
        try await makeResident([path])
        return params.filtered(root.child(at: path))
    }

    /// The children of `path` one level deep, as Firebase's `shallow=true` gives them: a leaf as
    /// itself, each child with children as `true`. A location not in memory is answered by
    /// seeking from child to child in the store, so its size does not matter.
    ///
    /// - Throws: ``ServerError`` `permissionDenied` when the rules do not let `caller` read it.
    public func readShallow(_ path: TreePath, as caller: Caller) async throws(ServerError) -> Node {
        try refuseIfDamaged()
        await startTurn()
        defer { endTurn() }
        try await authorizeInTurn(path, params: .default, as: caller)
        try await reloadIfNeeded()
        // Writes not yet durable (or not yet in the store's answer) are in memory only. One at or
        // above the location decides all of it: the location is loaded and answered from memory.
        // Ones below it decide only the children they are in: those children come from memory
        // (loaded, each on its own), the others from the store's shallow answer.
        let touched = resident.historyBelow(path)
        if resident.isResident(path) || touched == nil {
            try await makeResident([path])
            return StoredShallowData(of: root.child(at: path)).node
        }
        let children = touched.map { keys in keys.map { path.child($0) } } ?? []
        try await makeResident(children)
        var answer: StoredShallowData
        do {
            answer = try await store.readShallow(at: path, limit: ServerError.maxReadBytes)
        } catch {
            throw readFailure(error)
        }
        for child in children {
            guard let key = child.lastKey else { continue }
            let data = root.child(at: child)
            answer.children[key] = data.isEmpty ? nil : .some(data.isLeaf ? data : nil)
            if !data.isEmpty { answer.leaf = nil }
        }
        return answer.node
    }

    /// Throws `permissionDenied` unless `caller` may read `path` with `params`.
    public func authorizeRead(_ path: TreePath, params: QueryParams, as caller: Caller) async throws(ServerError) {
        try refuseIfDamaged()
        await startTurn()
        defer { endTurn() }
        try await authorizeInTurn(path, params: params, as: caller)
    }

    /// ``authorizeRead(_:params:as:)`` during a turn.
    func authorizeInTurn(_ path: TreePath, params: QueryParams, as caller: Caller) async throws(ServerError) {
        try await loadWhatRulesRead([(path, params, caller)])
        guard mayRead(path, params: params, as: caller) else {
            metrics?.denied("read")
            throw ServerError(.permissionDenied, "Permission denied")
        }
    }

    /// Whether the rules let `caller` read `path` with `params`, judged on the resident data
    /// (``loadWhatRulesRead(_:)`` first).
    func mayRead(_ path: TreePath, params: QueryParams, as caller: Caller) -> Bool {
        guard case .user(let auth) = caller else { return true }
        if path.firstKey == .info { return true }
        return rules.canRead(path, root: root, auth: auth, now: Double(clock()), query: RuleQuery(params))
    }

    /// Starts a listen and sends its first update (the current data, filtered) to `subscriber`,
    /// unless `knownHash` shows the subscriber already has exactly that data. The listened
    /// location stays in memory until the listen ends.
    ///
    /// - Returns: the current data the listen selects.
    /// - Throws: ``ServerError`` `permissionDenied` when the rules do not let `caller` read it,
    ///   `tooBig` when the location holds more than 256 MB; nothing is registered then.
    @discardableResult
    public func listen(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?,
                       knownHash: String? = nil, as caller: Caller) async throws(ServerError) -> Node {
        try refuseIfDamaged()
        await startTurn()
        defer { endTurn() }
        try await authorizeInTurn(path, params: params, as: caller)
        try await makeResident([path])
        // A listen with the same query and tag replaces the subscriber's earlier one.
        if listens.remove(subscriber, path: path, params: params, tag: tag) { resident.release(path) }
        resident.hold(path)
        lastHeldBytes = resident.heldBytes
        let data = listens.add(subscriber, path: path, params: params, tag: tag, caller: caller) { [root] in root.child(at: $0) }
        if let knownHash, !knownHash.isEmpty, knownHash == data.hash { return data }
        subscriber.send(ListenUpdate(listenPath: path, tag: tag, path: path,
                                     payload: EncodedPayload(.overwrite(data)), isInitial: true))
        return data
    }

    /// Stops a listen; returns whether it existed. Its location may then leave memory.
    @discardableResult
    public func unlisten(_ subscriber: any DataSubscriber, path: TreePath, params: QueryParams, tag: Int?) -> Bool {
        guard listens.remove(subscriber, path: path, params: params, tag: tag) else { return false }
        resident.release(path)
        lastHeldBytes = resident.heldBytes
        return true
    }

    /// The number of listens (for tests and statistics).
    public var listenCount: Int { listens.count }

    /// Judges `subscriber`'s listens again as `caller` (its connection authenticated anew, or its
    /// token expired): the ones no longer allowed are revoked, the others kept under the new
    /// identity. A listen whose rules read data that cannot be loaded is revoked too.
    public func reauthorize(_ subscriber: any DataSubscriber, as caller: Caller) async {
        await startTurn()
        defer { endTurn() }
        let checks = listens.listens(of: subscriber).map { ($0.path, $0.params, caller) }
        let loaded = (try? await loadWhatRulesRead(checks)) != nil
        let revoked = listens.reauthorize(subscriber, as: caller) { loaded && mayRead($0, params: $1, as: $2) }
        finishRevoking(revoked)
    }

    /// Puts `compiled` in force and revokes the listens it no longer allows (during a turn).
    func adoptRules(_ compiled: RuleSet, source: String) async {
        rules = compiled
        storedRulesText = source
        let loaded = (try? await loadWhatRulesRead(listens.all.map { ($0.path, $0.params, $0.caller) })) != nil
        finishRevoking(listens.revokeNoLongerAllowed { loaded && mayRead($0, params: $1, as: $2) })
    }

    /// Releases revoked listens' locations and tells their subscribers (a `c` push, a `cancel`
    /// event).
    private func finishRevoking(_ revoked: [ListenRegistry.Revoked]) {
        for listen in revoked {
            resident.release(listen.path)
            listen.subscriber.revoked(path: listen.path, params: listen.params, tag: listen.tag)
        }
        if !revoked.isEmpty { lastHeldBytes = resident.heldBytes }
    }
}

extension StoredShallowData {
    /// The shallow view of `node`, data in memory.
    init(of node: Node) {
        if node.isLeaf {
            self.init(leaf: node, children: [:])
            return
        }
        var children: [ChildKey: Node?] = [:]
        for (key, child) in node.children { children[key] = child.isLeaf ? child.withPriority(nil) : nil }
        self.init(leaf: nil, children: children)
    }
}
