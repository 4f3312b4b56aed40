import CoreTree
import Presence
import QueryEngine
import SyncClient
import SyncProtocol

extension Repo {
    /// Reads a query once: from the server when connected (falling back to the cache if the
    /// request fails for a reason other than the rules), else from the cache, where only data
    /// known to be complete counts.
    func getData(_ query: QuerySpec, completion: @escaping (Result<DataSnapshot, any Error>) -> Void) {
        let box = UncheckedBox(completion)
        perform { startGet(query, box) }
    }

    /// As ``getData(_:completion:)``, for the `async` API: suspends (instead of blocking a thread)
    /// until the read is started; `completion` then hears the answer on the callback queue.
    func getData(_ query: QuerySpec, completion: @escaping @Sendable (Result<DataSnapshot, any Error>) -> Void) async {
        let box = UncheckedBox<(Result<DataSnapshot, any Error>) -> Void>(completion)
        await performSuspending { $0.startGet(query, box) }
    }

    private func startGet(_ query: QuerySpec, _ box: UncheckedBox<(Result<DataSnapshot, any Error>) -> Void>) {
        queue.preconditionOnQueue()
        guard isConnected, !InfoTree.contains(query.path) else {
            answerFromCache(query, box)
            return
        }
        connection.get(path: query.path, query: query.params.wireObject, onComplete: onQueue { repo, result in
                guard let database = repo.database else { return }
                switch result {
                case .success(let node):
                    let snapshot = DataSnapshot(
                        node: node, ref: DatabaseReference(database: database, path: query.path), index: query.params.index)
                    repo.complete { box.value(.success(snapshot)) }
                case .failure(let failure) where failure.status == .permissionDenied:
                    let error = DatabaseError(status: failure.status, message: failure.serverMessage, underlying: failure)
                    repo.complete { box.value(.failure(error)) }
                case .failure:
                    repo.answerFromCache(query, box)
                }
        })
    }

    private func answerFromCache(_ query: QuerySpec, _ box: UncheckedBox<(Result<DataSnapshot, any Error>) -> Void>) {
        guard let database else { return }
        if let node = tree(for: query.path).cachedValue(for: query) {
            let snapshot = DataSnapshot(node: node, ref: DatabaseReference(database: database, path: query.path), index: query.params.index)
            complete { box.value(.success(snapshot)) }
            return
        }
        let error = DatabaseError(.offline, "The client is offline and has no complete cached data for \(query.path.wireForm).")
        complete { box.value(.failure(error)) }
    }
}
