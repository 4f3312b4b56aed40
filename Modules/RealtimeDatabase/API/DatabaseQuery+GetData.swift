import CoreTree

/// One-time reads: Firebase's `getData()`, and `getData(source:)` to read from the server only or
/// from the cache only (beyond Firebase).
extension DatabaseQuery {
    /// Reads the data once: from the server when connected, else from the local cache.
    public func getData(completion block: @escaping ((any Error)?, DataSnapshot?) -> Void) {
        getData(source: .default, completion: block)
    }

    /// Reads the data once: from the server when connected, else from the local cache.
    ///
    /// - Throws: ``DatabaseError``: the server's refusal (`permissionDenied`), or `offline` when
    ///   neither the server nor complete cached data can answer.
    public func getData() async throws -> DataSnapshot {
        try await getData(source: .default)
    }

    /// Reads the data once from `source`: the server when connected, else the cache
    /// (``DatabaseSource/default``); the server only (``DatabaseSource/server``); or the cache
    /// only, at once (``DatabaseSource/cache``). `block` runs on the callback queue with the
    /// snapshot or the error.
    public func getData(source: DatabaseSource, completion block: @escaping ((any Error)?, DataSnapshot?) -> Void) {
        database.repo.getData(spec, source: source) { result in
            switch result {
            case .success(let snapshot): block(nil, snapshot)
            case .failure(let error): block(error, nil)
            }
        }
    }

    /// Reads the data once from `source`.
    ///
    /// ```swift
    /// let fresh = try await ref.getData(source: .server)    // fails offline
    /// let cached = try await ref.getData(source: .cache)    // never asks the server
    /// ```
    ///
    /// - Throws: ``DatabaseError``: the server's refusal (`permissionDenied`); `offline` when the
    ///   server cannot answer a ``DatabaseSource/server`` read, or neither it nor the cache a
    ///   ``DatabaseSource/default`` one; `notCached` when the cache has no complete data for a
    ///   ``DatabaseSource/cache`` read.
    public func getData(source: DatabaseSource) async throws -> DataSnapshot {
        let answer = OneShot<DataSnapshot, any Error>()
        await database.repo.getData(spec, source: source) { answer.settle($0) }
        return try await answer.value()
    }
}
