/// The data directory's lock, taken by an import, an export or a check for as long as it runs.
enum TransferLock {
    /// Locks `dataDirectory`, refusing while a server (or another import or export) holds it.
    ///
    /// - Parameter what: what the caller does, for the message ("import into", "export").
    /// - Throws: ``ServerError`` (`unavailable`) saying who holds the directory.
    static func acquire(_ dataDirectory: String, for what: String) throws(ServerError) -> DataDirectoryLock {
        do {
            return try DataDirectoryLock(path: dataDirectory)
        } catch {
            throw ServerError(.unavailable, "cannot \(what) a namespace: \(error.message)", underlying: error)
        }
    }
}
