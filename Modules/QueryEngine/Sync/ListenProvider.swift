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
    ///   - onComplete: call with the server's status (`"ok"` or an error such as
    ///     `"permission_denied"`) when the listen completes; it returns the events to raise.
    /// - Returns: events to raise at once (usually none).
    func startListening(
        _ query: QuerySpec, tag: Int?, hash: @escaping () -> String,
        onComplete: @escaping (String) -> [SyncEvent]) -> [SyncEvent]

    /// Stops a server listen started with ``startListening(_:tag:hash:onComplete:)``.
    func stopListening(_ query: QuerySpec, tag: Int?)
}
