/// A store whose engine can check its files as a whole, beside the row checksums that every read
/// checks: the check ``StoreCheck`` runs before it walks the rows.
///
/// Opening a store does not run it (opening costs the same whatever the store's size); an
/// operator runs it with `rtdb-server check`, and the server runs it in the background after a
/// namespace opens.
public protocol FileCheckingStore: OrderedKeyValueStore {
    /// Checks the store's files with the engine's own structure check, while the store stays open
    /// and in use (reads and writes go on meanwhile), and says what it checked.
    ///
    /// - Returns: What was checked, in a few words (`"integrity_check: ok"`), for a report.
    /// - Throws: ``StorageError/Code-swift.enum/corrupt`` naming the damage and where it is;
    ///   ``StorageError/Code-swift.enum/closed`` when the store was closed during the check.
    func checkFiles() throws -> String
}
