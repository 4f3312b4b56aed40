import CoreTree
import Presence
import QueryEngine
import SyncClient
import SyncProtocol

extension Repo {
    /// What a one-time read hears: the snapshot, or why there is none.
    typealias GetCompletion = (Result<DataSnapshot, any Error>) -> Void

    /// Reads a query once from `source` (see ``DatabaseSource``); `completion` hears the answer
    /// on the callback queue.
    func getData(_ query: QuerySpec, source: DatabaseSource, completion: @escaping GetCompletion) {
        let box = UncheckedBox(completion)
        perform { startGet(query, source: source, box) }
    }

    /// As ``getData(_:source:completion:)``, for the `async` API: suspends (instead of blocking a
    /// thread) until the read is started; `completion` then hears the answer on the callback queue.
    func getData(_ query: QuerySpec, source: DatabaseSource, completion: @escaping @Sendable (Result<DataSnapshot, any Error>) -> Void) async {
        let box = UncheckedBox<GetCompletion>(completion)
        await performSuspending { $0.startGet(query, source: source, box) }
    }

    private func startGet(_ query: QuerySpec, source: DatabaseSource, _ box: UncheckedBox<GetCompletion>) {
        queue.preconditionOnQueue()
        if InfoTree.contains(query.path) {
            // Local state, always complete: every source reads it from memory (what a listener
            // there sees, else the state itself).
            guard let database else { return }
            let node = infoSyncTree.cachedValue(for: query) ?? info.value(at: query.path)
            let snapshot = DataSnapshot(node: node, ref: DatabaseReference(database: database, path: query.path), index: query.params.index)
            complete { box.value(.success(snapshot)) }
            return
        }
        switch source {
        case .cache:
            answerFromCache(query, box, missing: .notCached)
        case .default:
            // From the server when connected (falling back to the cache if the request fails for
            // a reason other than the rules), else from the cache, where only data known to be
            // complete counts.
            guard isConnected else {
                answerFromCache(query, box, missing: .offline)
                return
            }
            askServer(query, box) { repo, failure in
                if failure.status == .permissionDenied { return DatabaseError(status: failure.status, message: failure.serverMessage, underlying: failure) }
                repo.answerFromCache(query, box, missing: .offline)
                return nil
            }
        case .server:
            // Also when not connected yet: the connection holds the request until it connects,
            // or fails it when offline or when no connection comes within its get timeout.
            askServer(query, box) { _, failure in
                guard failure.status == .disconnected else {
                    return DatabaseError(status: failure.status, message: failure.serverMessage, underlying: failure)
                }
                return DatabaseError(
                    .offline,
                    "getData(source: .server) could not reach the server for \(query.path.wireForm) (\(failure.message)); it does not answer from the cache. Use .default to fall back to the cache, or .cache to read only the cache.",
                    underlying: failure)
            }
        }
    }

    /// Sends a get; on failure `fallback` returns the error to report, or nil when it answered.
    private func askServer(
        _ query: QuerySpec, _ box: UncheckedBox<GetCompletion>, fallback: @escaping (Repo, RequestFailure) -> DatabaseError?
    ) {
        let fallbackBox = UncheckedBox(fallback)
        connection.get(path: query.path, query: query.params.wireObject, onComplete: onQueue { repo, result in
            guard let database = repo.database else { return }
            switch result {
            case .success(let node):
                let snapshot = DataSnapshot(node: node, ref: DatabaseReference(database: database, path: query.path), index: query.params.index)
                repo.complete { box.value(.success(snapshot)) }
            case .failure(let failure):
                guard let error = fallbackBox.value(repo, failure) else { return }
                repo.complete { box.value(.failure(error)) }
            }
        })
    }

    /// Answers from what the cache holds complete (pending writes applied), or fails with `missing`.
    private func answerFromCache(_ query: QuerySpec, _ box: UncheckedBox<GetCompletion>, missing: DatabaseError.Code) {
        guard let database else { return }
        if let node = tree(for: query.path).cachedValue(for: query) {
            let snapshot = DataSnapshot(node: node, ref: DatabaseReference(database: database, path: query.path), index: query.params.index)
            complete { box.value(.success(snapshot)) }
            return
        }
        let error = missing == .notCached
            ? DatabaseError(
                .notCached,
                "Nothing complete is cached for \(query.path.wireForm), and getData(source: .cache) does not ask the server. Data is cached while it is listened to or kept synced, and kept on disk with persistence on.")
            : DatabaseError(.offline, "The client is offline and has no complete cached data for \(query.path.wireForm).")
        complete { box.value(.failure(error)) }
    }
}
