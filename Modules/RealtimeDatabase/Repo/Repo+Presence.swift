import CoreTree
import Logging
import Presence
import QueryEngine
import SyncClient
import SyncProtocol

extension Repo {
    // MARK: - Connection state

    func connected(serverTimeOffset: Int64) {
        clock = ServerClock(offsetMilliseconds: serverTimeOffset)
        updateInfo(InfoTree.serverTimeOffsetKey, Node(.number(Double(serverTimeOffset))))
        updateInfo(InfoTree.connectedKey, Node(.bool(true)))
        sendReadyTransactions()
    }

    /// The connection dropped: `.info/connected` turns false and the onDisconnect writes the
    /// server is now running are applied locally too, so listeners see what the server holds.
    func disconnected() {
        syncedQueries.removeAll()
        updateInfo(InfoTree.connectedKey, Node(.bool(false)))
        var events: [SyncEvent] = []
        for write in onDisconnects.writes {
            // An increment that would overflow is refused by the server too: nothing to show.
            guard let node = try? resolvingServerValues(write.node, at: write.path) else { continue }
            events += syncTree.applyServerOverwrite(path: write.path, node: node)
            events += abortTransactions(overlapping: write.path, because: .overriddenBySet)
        }
        onDisconnects.removeAll()
        raise(events)
    }

    func authenticationChanged(_ authenticated: Bool) {
        updateInfo(InfoTree.authenticatedKey, Node(.bool(authenticated)))
    }

    var isConnected: Bool { info.node.immediateChild(InfoTree.connectedKey).leafValue == .bool(true) }

    /// The writes the server has not acknowledged (transactions in flight included).
    var pendingWriteCount: Int { syncTree.pendingWrites.count }

    /// Publishes the number of writes the server has not acknowledged (`/.info/pendingWrites`,
    /// `Database.pendingWriteCounts`) when it changed. Called by ``raise(_:)``, which every change
    /// to the pending writes goes through.
    func refreshPendingWriteCount() {
        let count = pendingWriteCount
        guard count != lastPendingWriteCount else { return }
        lastPendingWriteCount = count
        for continuation in pendingWriteObservers.values { continuation.yield(count) }
        updateInfo(InfoTree.pendingWritesKey, Node(.number(Double(count))))
    }

    /// The pending write count now, then each time it changes; ends when the database shuts down.
    func pendingWriteCountStream() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        perform {
            let id = nextObserverID
            nextObserverID += 1
            if isShutDown {
                continuation.finish()
                return
            }
            pendingWriteObservers[id] = continuation
            continuation.yield(lastPendingWriteCount)
            continuation.onTermination = { [weak self] _ in
                guard let repo = self else { return }
                repo.enqueue { repo.pendingWriteObservers[id] = nil }
            }
        }
        return stream
    }

    private func updateInfo(_ key: ChildKey, _ value: Node) {
        guard let path = info.set(key, to: value) else { return }
        raise(infoSyncTree.applyServerOverwrite(path: path, node: value), checkMetadata: false)
    }

    /// Serves a listen on the `.info` tree from local state (after the registration's own events).
    func startInfoListen(_ query: QuerySpec, onComplete: @escaping (ListenOutcome) -> [SyncEvent]) {
        let completeBox = UncheckedBox(onComplete)
        enqueue { [weak self] in
            guard let self else { return }
            let node = self.info.value(at: query.path)
            var events: [SyncEvent] = []
            if !node.isEmpty { events += self.infoSyncTree.applyServerOverwrite(path: query.path, node: node) }
            events += completeBox.value(.complete)
            self.raise(events)
        }
    }

    // MARK: - onDisconnect

    /// Registers a set to run on the server when this client disconnects.
    func onDisconnectSet(_ node: Node, at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        try Repo.validateWrite(node, at: path)
        connection.onDisconnectPut(path: path, data: node, onComplete: onQueue { repo, status in
            if status.isOK { repo.onDisconnects.remember(node, at: path) }
            repo.onDisconnectAnswered(status, completion)
        })
    }

    /// Registers an update to run on the server when this client disconnects.
    func onDisconnectUpdate(_ children: [(path: TreePath, node: Node)], at path: TreePath, completion: WriteCompletion?) throws(DatabaseError) {
        if InfoTree.contains(path) { throw Repo.infoWriteError(path) }
        do {
            try Validation.validateUpdate(children, at: path)
        } catch {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        }
        let box = UncheckedBox(children)
        connection.onDisconnectMerge(path: path, children: children, onComplete: onQueue { repo, status in
            if status.isOK { repo.onDisconnects.remember(update: box.value, at: path) }
            repo.onDisconnectAnswered(status, completion)
        })
    }

    /// Cancels the onDisconnect writes registered at or below `path`.
    func onDisconnectCancel(at path: TreePath, completion: WriteCompletion?) {
        connection.onDisconnectCancel(path: path, onComplete: onQueue { repo, status in
            if status.isOK { repo.onDisconnects.forget(path) }
            repo.onDisconnectAnswered(status, completion)
        })
    }

    private func onDisconnectAnswered(_ status: RequestStatus, _ completion: WriteCompletion?) {
        let error = status.isOK ? nil : DatabaseError(status: status.status, message: status.message)
        if let error, completion == nil { Repo.logger.warning("An onDisconnect operation failed: \(error)") }
        if let completion { complete { completion(error) } }
    }
}

/// Serves listens on `/.info` from the repo's local state.
final class InfoListenProvider: ListenProvider {
    weak var repo: Repo?

    func startListening(
        _ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]
    ) -> [SyncEvent] {
        repo?.startInfoListen(query, onComplete: onComplete)
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {}
}

/// Hands connection events to the repo queue, in the order the connection reports them.
final class RepoConnectionDelegate: ConnectionDelegate, @unchecked Sendable {
    // @unchecked: `repo` is set once, before the connection starts, and only read afterwards.
    weak var repo: Repo?

    func connectionDidConnect(serverTimeOffsetMilliseconds: Int64, sessionID: String) {
        repo?.enqueue { [weak repo] in repo?.connected(serverTimeOffset: serverTimeOffsetMilliseconds) }
    }

    func connectionDidDisconnect() {
        repo?.enqueue { [weak repo] in repo?.disconnected() }
    }

    func connectionDidReceive(_ push: DataPush, at path: TreePath, tag: Int?) {
        repo?.enqueue { [weak repo] in repo?.serverPushed(push, at: path, tag: tag) }
    }

    func connectionAuthStatusChanged(authenticated: Bool) {
        repo?.enqueue { [weak repo] in repo?.authenticationChanged(authenticated) }
    }

    func connectionListenRevoked(_ request: ListenRequest, status: WireStatus) {
        repo?.enqueue { [weak repo] in repo?.listenRevoked(request, status: status) }
    }

    func connectionDidShutDown(reason: String) {
        Repo.logger.warning("The server shut the connection down for good: \(reason)")
    }
}
