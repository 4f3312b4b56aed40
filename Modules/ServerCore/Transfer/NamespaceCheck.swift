import Foundation
public import Persistence

/// Checks an embedded namespace's store as a whole, offline: the backend's check of its files,
/// then every row's checksum (``Persistence/StoreCheck``). `rtdb-server check` runs it.
///
/// Like an export, it holds the data directory's lock for its whole run, so it refuses while a
/// server uses the directory (the stores admit one process at a time); a running server checks
/// each namespace in the background after opening it instead. Everything runs on the calling
/// thread: call it from a thread of your own.
public enum NamespaceCheck {
    /// Checks `namespace` of `dataDirectory`, stored with `backend`.
    ///
    /// - Returns: The report; a store too damaged to open is a report whose damage says so.
    /// - Throws: ``ServerError``: `invalidArgument` for a bad name or a namespace that does not
    ///   exist, `unavailable` while a server uses the data directory, `storageFailed` when the
    ///   store cannot be read for another reason than damage (in use, an I/O error).
    public static func run(namespace: String, dataDirectory: String, backend: StorageBackend) throws(ServerError) -> StoreCheck.Report {
        let started = ContinuousClock.now
        let (lock, directories) = try TransferLock.existingNamespace(namespace, in: dataDirectory, for: "check")
        defer { withExtendedLifetime(lock) {} }
        let rows: ChecksummedStore
        do {
            rows = try StorageEngine.openSealed(try backend.open(directories.live))
        } catch let error as StorageError where error.code == .corrupt {
            return StoreCheck.Report(
                fileCheck: "the store cannot be opened", seconds: (ContinuousClock.now - started) / .seconds(1), damage: [error])
        } catch {
            throw ServerError(.storageFailed, "cannot open namespace \(namespace)'s \(backend.name) store: \(error)", underlying: error)
        }
        defer { try? rows.close() }
        do {
            var report = try StoreCheck.run(rows)
            report.seconds = (ContinuousClock.now - started) / .seconds(1)
            return report
        } catch {
            throw ServerError(.storageFailed, "cannot check namespace \(namespace)'s store: \(error)", underlying: error)
        }
    }
}
