import CoreTree

/// Starts and stops listens on the server for the sync tree. The connection layer implements it.
public protocol ListenProvider: AnyObject {
    /// Starts a server listen.
    ///
    /// - Parameters:
    ///   - query: the query to listen to (already normalised: queries that load all data arrive as
    ///     the default query at their path).
    ///   - tag: the query's tag, `nil` for default queries.
    ///   - hash: the hash of the data the client already has for the query (for the `h` field).
    ///   - onComplete: call with the listen's outcome when the server answers; it returns the
    ///     events to raise.
    /// - Returns: events to raise at once (usually none).
    func startListening(
        _ query: QuerySpec, tag: Int?, hash: @escaping () -> String,
        onComplete: @escaping (ListenOutcome) -> [SyncEvent]) -> [SyncEvent]

    /// Stops a server listen started with ``startListening(_:tag:hash:onComplete:)``.
    func stopListening(_ query: QuerySpec, tag: Int?)
}
