import CoreTree
import Logging
import Persistence
import Presence
import QueryEngine
import SyncClient
import SyncProtocol
import Synchronization

extension Repo {
    // MARK: - Observers

    /// Adds an observer; its initial events (from memory or the disk cache) are raised at once.
    func addObserver(_ registration: ObserverRegistration, for query: QuerySpec) {
        perform { addObserverOnQueue(registration, for: query) }
    }

    /// As ``addObserver(_:for:)``, for the `async` API: suspends until the initial events are queued.
    func addObserver(_ registration: ObserverRegistration, for query: QuerySpec) async {
        await performSuspending { $0.addObserverOnQueue(registration, for: query) }
    }

    private func addObserverOnQueue(_ registration: ObserverRegistration, for query: QuerySpec) {
        queue.preconditionOnQueue()
        observers[registration.handle] = (registration, query)
        if registration.includeMetadataChanges { metadataObservers[registration.handle] = (registration, query) }
        raise(tree(for: query.path).addEventRegistration(registration, for: query))
    }

    /// A fresh observer handle (from any thread).
    func makeHandle() -> DatabaseHandle {
        nextHandle.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Removes one observer.
    func removeObserver(withHandle handle: DatabaseHandle) {
        perform { removeObserverOnQueue(withHandle: handle) }
    }

    /// As ``removeObserver(withHandle:)``, for the `async` API.
    func removeObserver(withHandle handle: DatabaseHandle) async {
        await performSuspending { $0.removeObserverOnQueue(withHandle: handle) }
    }

    private func removeObserverOnQueue(withHandle handle: DatabaseHandle) {
        queue.preconditionOnQueue()
        metadataObservers[handle] = nil
        guard let (registration, query) = observers.removeValue(forKey: handle) else { return }
        registration.deactivate()
        raise(tree(for: query.path).removeEventRegistration(registration, for: query))
    }

    /// Removes every observer of `query` (of every query at its location for the default query).
    func removeAllObservers(for query: QuerySpec) {
        perform {
            let matching = observers.filter { $0.value.query.path == query.path && (query.isDefault || $0.value.query == query) }
            for (handle, entry) in matching {
                observers[handle] = nil
                metadataObservers[handle] = nil
                entry.registration.deactivate()
                raise(tree(for: entry.query.path).removeEventRegistration(entry.registration, for: entry.query))
            }
        }
    }

    /// `keepSynced`: keeps a listen (and the data on disk, unprunable) without observers.
    func keepSynced(_ query: QuerySpec, _ keep: Bool) {
        perform {
            if keep {
                guard keptSynced[query] == nil else { return }
                let registration = KeepSyncedRegistration()
                keptSynced[query] = registration
                raise(syncTree.addEventRegistration(registration, for: query))
            } else {
                guard let registration = keptSynced.removeValue(forKey: query) else { return }
                raise(syncTree.removeEventRegistration(registration, for: query))
            }
            do {
                try persistence?.setQueryPinned(query, keep)
            } catch {
                Repo.logger.error("Could not record keepSynced(\(keep)) for \(query) on disk: \(error)")
            }
        }
    }

    /// `Database.purgeCache()` (`path` nil) and `purgeCache(at:)`: drops cached data, everywhere
    /// or at and below `path`, that no active listen, pin or queued write needs.
    func purgeCache(at path: TreePath?) throws(DatabaseError) {
        try perform { () throws(DatabaseError) in
            guard let persistence else { return }
            do {
                if let path { try persistence.purgeCache(at: path) } else { try persistence.purgeCache() }
            } catch {
                throw DatabaseError(.storageFailure, "The cache could not be purged: \(DatabaseError.reason(error))", underlying: error)
            }
        }
    }

    /// Listens again to every location pinned with `keepSynced(true)` in an earlier run (the pins
    /// are kept on disk), so pinned data is current after a restart without app code. Unlike
    /// Firebase, where a pin lasts only as long as the process; `keepSynced(false)` ends it.
    func restorePins() {
        guard let persistence else { return }
        let pinned = persistence.pinnedQueries
        for query in pinned where keptSynced[query] == nil {
            let registration = KeepSyncedRegistration()
            keptSynced[query] = registration
            raise(syncTree.addEventRegistration(registration, for: query))
        }
        if !pinned.isEmpty { Repo.logger.info("Listening again to \(pinned.count) locations pinned with keepSynced(true).") }
    }

    // MARK: - Server listens (the sync tree's ListenProvider)

    func startServerListen(
        _ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]
    ) {
        let request = ListenRequest(path: query.path, query: query.params.wireObject, identifier: query.identifier, tag: tag)
        let hashBox = UncheckedBox(hash)
        let completeBox = UncheckedBox(onComplete)
        connection.listen(
            request,
            hash: { [weak self] in await self?.queue.value { hashBox.value() } ?? "" },
            onComplete: onQueue { repo, status in
                if !status.isOK { Repo.logger.warning("Listen at \(query) failed: \(status.status)") }
                if status.isOK { repo.syncedQueries.insert(query) }
                repo.raise(completeBox.value(status.isOK ? .complete : .cancelled(reason: status.status.rawValue)))
            })
    }

    func stopServerListen(_ query: QuerySpec, tag: Int?) {
        connection.unlisten(ListenRequest(path: query.path, query: query.params.wireObject, identifier: query.identifier, tag: tag))
    }

    /// The server revoked a listen (rules changed): cancel its observers.
    func listenRevoked(_ request: ListenRequest, status: WireStatus) {
        guard let params = try? QueryParams(wireObject: request.query) else { return }
        raise(syncTree.removeEventRegistration(nil, for: QuerySpec(path: request.path, params: params), cancelStatus: status.rawValue))
    }

    /// Data the server pushed.
    func serverPushed(_ push: DataPush, at path: TreePath, tag: Int?) {
        if let tag {
            if let query = syncTree.query(forTag: tag) { syncedQueries.insert(query) }
        } else {
            syncedQueries.insert(.default(at: path))
        }
        let events: [SyncEvent]
        switch (push, tag) {
        case (.overwrite(let node), nil): events = syncTree.applyServerOverwrite(path: path, node: node)
        case (.overwrite(let node), let tag?): events = syncTree.applyTaggedQueryOverwrite(path: path, node: node, tag: tag)
        case (.merge(let children), nil): events = syncTree.applyServerMerge(path: path, children: children)
        case (.merge(let children), let tag?): events = syncTree.applyTaggedQueryMerge(path: path, children: children, tag: tag)
        }
        raise(events)
    }
}

/// Hands the sync tree's listen requests to the repo (weakly, so the tree does not keep it alive).
final class RepoListenProvider: ListenProvider {
    weak var repo: Repo?

    func startListening(
        _ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]
    ) -> [SyncEvent] {
        repo?.startServerListen(query, tag: tag, hash: hash, onComplete: onComplete)
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {
        repo?.stopServerListen(query, tag: tag)
    }
}

/// Carries a value the compiler cannot prove sendable to code that only uses it on the repo queue.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
