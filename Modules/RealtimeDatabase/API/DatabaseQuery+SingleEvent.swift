import CoreTree
import Logging

/// The `async` forms of a single-event read, two by two: Firebase's, with Firebase's exact
/// signatures, and this library's, which throw instead of hanging.
///
/// | Firebase's (never throws) | throws, never hangs |
/// | --- | --- |
/// | `await query.observeSingleEvent(of:)` | `try await query.singleEvent(of:)` |
/// | `await query.observeSingleEventAndPreviousSiblingKey(of:)` | `try await query.singleEventAndPreviousSiblingKey(of:)` |
///
/// Firebase imports its single-event methods into Swift without `throws`: when the server refuses
/// the listen (its rules deny the read), no event comes and the call never returns. The forms
/// with Firebase's names do the same, so code written for Firebase compiles and behaves
/// unchanged, and they log the refusal. The `singleEvent` forms throw the refusal as a
/// ``DatabaseError`` (`permissionDenied`), so an error is never mistaken for an empty location,
/// and throw `CancellationError` when the calling task is cancelled.
extension DatabaseQuery {
    /// The first event of `eventType` (Firebase's `async` form).
    ///
    /// When the server refuses the listen, no event comes: as with Firebase, the call never
    /// returns (the refusal is logged). ``singleEvent(of:)`` throws it instead.
    ///
    /// - Returns: the snapshot of the first event, from the cache when it holds complete data.
    public func observeSingleEvent(of eventType: DataEventType) async -> DataSnapshot {
        await observeSingleEventAndPreviousSiblingKey(of: eventType).0
    }

    /// The first event of `eventType` and the key of the child before it in the query's order
    /// (Firebase's `async` form).
    ///
    /// When the server refuses the listen, no event comes: as with Firebase, the call never
    /// returns (the refusal is logged). ``singleEventAndPreviousSiblingKey(of:)`` throws it instead.
    public func observeSingleEventAndPreviousSiblingKey(of eventType: DataEventType) async -> (DataSnapshot, String?) {
        let first = OneShot<(DataSnapshot, String?), Never>()
        let location = path.wireForm
        let registration = makeRegistration(eventType, once: true, callback: { first.succeed(($0, $1)) }, cancel: { error in
            ClientLog.logger.error(
                "observeSingleEvent(of:) at \(location) will never return: the listen was refused (\(error)). Firebase's async form cannot throw; singleEvent(of:) throws the refusal instead.")
        })
        await database.repo.addObserver(registration, for: spec)
        // After a refusal nothing settles `first`, and this task waits for good, as Firebase's does.
        return await first.value()
    }

    /// The first event of `eventType`; throws where ``observeSingleEvent(of:)`` would never return.
    ///
    /// - Returns: the snapshot of the first event, from the cache when it holds complete data.
    /// - Throws: ``DatabaseError`` when the server refuses or revokes the listen (for example
    ///   ``DatabaseError/Code-swift.struct/permissionDenied``); `CancellationError` when the
    ///   calling task is cancelled first (the listen then stops).
    public func singleEvent(of eventType: DataEventType) async throws -> DataSnapshot {
        try await singleEventAndPreviousSiblingKey(of: eventType).0
    }

    /// The first event of `eventType` and the key of the child before it in the query's order;
    /// throws where ``observeSingleEventAndPreviousSiblingKey(of:)`` would never return.
    ///
    /// - Throws: as ``singleEvent(of:)`` does.
    public func singleEventAndPreviousSiblingKey(of eventType: DataEventType) async throws -> (DataSnapshot, String?) {
        let first = OneShot<(DataSnapshot, String?), any Error>()
        // The registration delivers exactly one of the two (its claim is taken once).
        let registration = makeRegistration(eventType, once: true, callback: { first.succeed(($0, $1)) }, cancel: { first.fail($0) })
        let repo = database.repo
        let result = await withTaskCancellationHandler {
            await repo.addObserver(registration, for: spec)
            return await first.result()
        } onCancel: {
            first.fail(CancellationError())
        }
        if case .failure = result {
            // Cancelled (perhaps before the observer was even added), or refused: stop listening.
            await repo.removeObserver(withHandle: registration.handle)
        }
        return try result.get()
    }
}
