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

    /// Checks `namespace`'s name, locks `dataDirectory` (see ``acquire(_:for:)``), removes what a
    /// killed import left, and returns the lock with the namespace's directories.
    ///
    /// - Throws: ``ServerError``: `invalidArgument` for a bad name or a namespace that does not
    ///   exist, `unavailable` while a server uses the data directory.
    static func existingNamespace(
        _ namespace: String, in dataDirectory: String, for what: String
    ) throws(ServerError) -> (lock: DataDirectoryLock, directories: NamespaceDirectories) {
        try NamespaceRegistry.checkName(namespace)
        let lock = try acquire(dataDirectory, for: what)
        let directories = NamespaceDirectories(dataDirectory: dataDirectory, namespace: namespace)
        try directories.recover()
        guard directories.exists else {
            throw ServerError(.invalidArgument, "there is no namespace \(namespace) in \(dataDirectory)")
        }
        return (lock, directories)
    }
}
