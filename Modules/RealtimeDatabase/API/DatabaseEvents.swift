/// One event of an observed query: what happened, the data, and the previous sibling's key.
public struct DatabaseEvent: Sendable {
    /// The kind of event.
    public var type: DataEventType
    /// The data (the child's for child events).
    public var snapshot: DataSnapshot
    /// For child added, changed and moved events: the key of the child before it in the query's order.
    public var previousSiblingKey: String?
}

extension DatabaseQuery {
    /// The query's events of the given types as an `AsyncSequence`, starting with the data already
    /// known. Observing stops when the iteration ends or its task is cancelled. The sequence
    /// throws if the server refuses the listen (rules).
    ///
    /// ```swift
    /// for try await event in ref.queryLimited(toLast: 10).events(of: [.childAdded]) { … }
    /// ```
    public func events(of types: Set<DataEventType> = [.value]) -> AsyncThrowingStream<DatabaseEvent, any Error> {
        AsyncThrowingStream { continuation in
            let handles = types.sorted { $0.rawValue < $1.rawValue }.map { type in
                observe(type, andPreviousSiblingKeyWith: { snapshot, previous in
                    continuation.yield(DatabaseEvent(type: type, snapshot: snapshot, previousSiblingKey: previous))
                }, withCancel: { error in
                    continuation.finish(throwing: error)
                })
            }
            let repo = database.repo
            continuation.onTermination = { _ in
                for handle in handles { repo.removeObserver(withHandle: handle) }
            }
        }
    }

    /// The query's `value` snapshots as an `AsyncSequence`: the current data, then each change.
    public var values: AsyncThrowingStream<DataSnapshot, any Error> {
        let events = events(of: [.value])
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events { continuation.yield(event.snapshot) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
