import CoreTree
import Persistence

/// The local cache, seen and controlled by the app (beyond Firebase, which has only the budget).
extension Database {
    /// The bytes of server data cached on disk now (keys plus values of the cached rows, the
    /// measure ``persistenceCacheSizeBytes`` budgets); 0 with persistence off.
    public var cacheSizeBytes: Int {
        let repo = repo
        return repo.perform { repo.persistence?.cacheSizeBytes ?? 0 }
    }

    /// Removes cached server data nothing needs: every location not listened to now and not
    /// kept synced. Queued writes and the data under them are never removed. Does nothing with
    /// persistence off.
    ///
    /// - Throws: ``DatabaseError/Code-swift.struct/storageFailure`` when the local store fails.
    public func purgeCache() throws(DatabaseError) {
        try repo.purgeCache(at: nil)
    }

    /// Removes the cached server data at and below `path` that nothing needs, as
    /// ``purgeCache()`` does for the whole cache: data an observer listens to now, data kept
    /// synced, and data under queued writes stay; so does everything outside `path`. A location
    /// above `path` that was cached whole stays cached except `path`. Does nothing with
    /// persistence off.
    ///
    /// ```swift
    /// try database.purgeCache(at: "rooms/\(leftRoom)")   // the room's messages leave the disk
    /// ```
    ///
    /// - Parameter path: a location, as ``reference(withPath:)`` takes it (`"rooms/r1"`).
    /// - Throws: ``DatabaseError``: `invalidArgument` for an invalid path or one in `/.info`
    ///   (local state, never cached); `storageFailure` when the local store fails.
    public func purgeCache(at path: String) throws(DatabaseError) {
        let location = try DatabaseReference.parsedPath(path)
        if location.firstKey == .info {
            throw DatabaseError(.invalidArgument, "\(location.wireForm) is in /.info, which holds local state, never cached data.")
        }
        try repo.purgeCache(at: location)
    }
}
