import CoreTree
import Foundation
public import Persistence
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes an embedded namespace's data as JSON in export format (priorities as `.priority`),
/// which ``NamespaceImport`` and Firebase's import read back.
///
/// The rows are read in key order and written out as they come (``ExportJSONWriter``), so
/// memory stays small whatever the namespace's size. The export holds the data directory's lock
/// for its whole run: no server and no import can write the namespace meanwhile, so the file is
/// one point in time. It therefore refuses to run while a server uses the data directory: the
/// backends open a store for one process at a time (each takes an exclusive lock on its
/// directory; LevelDB allows one process per database), and an export holding a namespace's
/// store would keep a running server from opening it.
///
/// A file is written beside its destination and renamed into place once complete and synced, so
/// a failed export leaves no partial file (``ExportFile``). Everything runs on the calling thread:
/// call it from a thread of your own, not from a task of the cooperative pool. A namespace a
/// running server serves is exported by the server itself, from a snapshot of its store
/// (``ServerStore/exportSnapshot(_:)``).
public enum NamespaceExport {
    /// What an export did.
    public struct Report: Sendable {
        /// Bytes of JSON written.
        public var bytes: Int
        /// Rows read.
        public var rows: Int
        /// From the lock to the last byte written.
        public var seconds: Double

        /// JSON megabytes (10^6 bytes) written per second.
        public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    }

    /// Exports `namespace` of `dataDirectory`, stored with `backend`, to `file` (standard output
    /// when `nil`).
    ///
    /// - Throws: ``ServerError``: `invalidArgument` for a bad name or a namespace that does not
    ///   exist, `unavailable` while a server uses the data directory, `storageFailed` when the
    ///   store cannot be read (damaged rows included) or the output written.
    public static func run(namespace: String, dataDirectory: String, backend: StorageBackend, to file: String?) throws(ServerError) -> Report {
        let started = ContinuousClock.now
        let (lock, directories) = try TransferLock.existingNamespace(namespace, in: dataDirectory, for: "export")
        defer { withExtendedLifetime(lock) {} }
        let rows: ChecksummedStore
        do {
            rows = try StorageEngine.openSealed(try backend.open(directories.live))
        } catch {
            throw ServerError(.storageFailed, "cannot open namespace \(namespace)'s \(backend.name) store: \(error)", underlying: error)
        }
        defer { try? rows.close() }
        let destination = try ExportFile(destination: file)
        let output = ExportOutput { bytes throws(ServerError) in try destination.write(bytes) }
        var writer = ExportJSONWriter(output: output)
        do {
            try rows.scan(StorageEngine.cacheRange(at: .root), reverse: false) { key, value in
                try writer.add(key: key, value: value)
                return true
            }
            try writer.finish()
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(.storageFailed, "cannot read namespace \(namespace)'s store: \(error)", underlying: error)
        }
        try destination.complete()
        return Report(bytes: output.bytes, rows: writer.rows, seconds: (ContinuousClock.now - started) / .seconds(1))
    }
}
