/// Where a one-time read (``DatabaseQuery/getData(source:)``) takes its data from (beyond
/// Firebase, whose `getData()` is ``default``; the names are Firestore's `FirestoreSource`'s).
public enum DatabaseSource: Sendable, Hashable {
    /// The server when connected, else the cache: `getData()`.
    ///
    /// Offline, or when no connection comes within 3 s, or when the server's answer is lost, the
    /// read answers from the cache, or fails with ``DatabaseError/Code-swift.struct/offline``
    /// when the cache has no complete data for it.
    case `default`
    /// The server only: fails with ``DatabaseError/Code-swift.struct/offline`` when the server
    /// cannot be reached (offline, no connection within 3 s, the connection lost before the
    /// answer) rather than answering from the cache.
    case server
    /// The cache only, at once, without asking the server: what listeners would see (cached
    /// server data with pending local writes applied), or an error
    /// (``DatabaseError/Code-swift.struct/notCached``) when the cache has no complete data for it.
    case cache
}
