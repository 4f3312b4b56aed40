/// The export of a namespace while it serves.
extension NamespaceDatabase {
    /// The namespace's whole data as JSON in export format (priorities as `.priority`), from one
    /// moment of its store, handed to `write` piece by piece (``ServerStore/exportSnapshot(_:)``).
    ///
    /// Only administrators may export: the caller checks that, since the export bypasses the
    /// security rules. Writes go on meanwhile; the document holds each commit that was durable
    /// when the export began, whole, and none made later (a write acknowledged to its client is
    /// durable, so every acknowledged write is in it). It takes no turn of the namespace: reads
    /// and writes are not held up.
    ///
    /// - Throws: the store's error (``Persistence/StorageError`` on an embedded store, damage
    ///   included), or `write`'s.
    public nonisolated func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws {
        try await store.exportSnapshot(write)
    }
}
