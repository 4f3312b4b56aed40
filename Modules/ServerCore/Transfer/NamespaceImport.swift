import CoreTree
import Foundation
public import Persistence
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Loads a JSON export (Firebase's, or ``NamespaceExport``'s) of any size into an embedded
/// namespace, replacing its data, at the speed of the disk.
///
/// The document is read in chunks by a ``CoreTree/JSONStreamReader`` and written as the embedded
/// store's rows, in large batches that are not synced, into a new store in a staging directory
/// of the data directory. The new store gets the old one's settings (the security rules, the
/// exactly-once ledger), is synced once and closed, and is then switched in for the namespace's
/// directory (``NamespaceDirectories/switchIn(exchange:)``). A process killed at any moment
/// leaves the namespace with its old data or its new data; the next import, export or server
/// start removes what the killed one left.
///
/// Server values in the document (`{".sv": "timestamp"}`, increments) are resolved as a write
/// at the import's start would resolve them. The whole import holds the data directory's lock,
/// so it refuses to run while a server uses the directory, and no server starts meanwhile.
///
/// Everything runs on the calling thread: call it from a thread of your own, not from a task
/// of the cooperative pool.
public enum NamespaceImport {
    /// What to import into, and how.
    public struct Options: Sendable {
        /// The namespace to replace.
        public var namespace: String
        /// The server's data directory.
        public var dataDirectory: String
        /// The backend the namespace's store uses (the server's `--backend`).
        public var backend: StorageBackend
        /// Values up to this many bytes of JSON are parsed whole (``CoreTree/JSONStreamReader``).
        public var subtreeBytes = JSONStreamReader.defaultSubtreeBytes
        /// Rows are written in batches of about this many bytes (two may wait for the writing
        /// thread while a third is made).
        public var batchBytes = 8 << 20
        /// The file is read this many bytes at a time.
        public var chunkBytes = 1 << 20
        /// Whether to switch the new store in by exchanging the two directories where the file
        /// system can (else the old one is moved aside first; both survive a crash).
        public var exchange = true
        /// The time server values resolve to, in milliseconds since 1970.
        public var serverTime = Int64(Date().timeIntervalSince1970 * 1000)

        /// Options to import into `namespace` of `dataDirectory`, stored with `backend`.
        public init(namespace: String, dataDirectory: String, backend: StorageBackend) {
            self.namespace = namespace
            self.dataDirectory = dataDirectory
            self.backend = backend
        }
    }

    /// What an import did.
    public struct Report: Sendable {
        /// Bytes of JSON read.
        public var bytes: Int
        /// Rows written, and their bytes (keys and values).
        public var rows: Int
        /// Bytes of the rows (keys and values, before checksums).
        public var rowBytes: Int
        /// Settings kept from the store that was replaced.
        public var settingsKept: Int
        /// From the lock to the switch.
        public var seconds: Double

        /// JSON megabytes (10^6 bytes) read per second.
        public var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    }

    /// Imports the JSON document in `file` into `options.namespace`, replacing its data.
    ///
    /// - Parameters:
    ///   - file: the document (UTF-8 JSON, plain or export format).
    ///   - options: where to, and how.
    ///   - progress: called with the bytes read so far after each chunk.
    /// - Returns: what was imported.
    /// - Throws: ``ServerError``: `invalidArgument` for a bad namespace name or a document that
    ///   cannot be imported (its message names the byte), `unavailable` while a server uses the
    ///   data directory, `storageFailed` when the file or a store cannot be read or written.
    ///   Nothing changes in the namespace when it throws.
    public static func run(file: String, options: Options, progress: ((Int) -> Void)? = nil) throws(ServerError) -> Report {
        try NamespaceRegistry.checkName(options.namespace)
        let started = ContinuousClock.now
        let lock = try TransferLock.acquire(options.dataDirectory, for: "import into")
        defer { withExtendedLifetime(lock) {} }
        let directories = NamespaceDirectories(dataDirectory: options.dataDirectory, namespace: options.namespace)
        try directories.recover()
        let input = try InputFile(path: file)
        defer { input.close() }
        let settings = try keptSettings(directories, backend: options.backend)
        var report: Report
        do {
            report = try stage(input, into: directories.staging, settings: settings, options: options, progress: progress)
        } catch {
            try? NamespaceDirectories.remove(directories.staging)
            throw error
        }
        try directories.switchIn(exchange: options.exchange)
        report.seconds = (ContinuousClock.now - started) / .seconds(1)
        return report
    }

    /// The settings rows of the namespace's current store (none when it has no store).
    private static func keptSettings(_ directories: NamespaceDirectories, backend: StorageBackend) throws(ServerError) -> [(key: [UInt8], value: [UInt8])] {
        guard directories.exists else { return [] }
        do {
            let rows = try StorageEngine.openSealed(try backend.open(directories.live))
            defer { try? rows.close() }
            var settings: [(key: [UInt8], value: [UInt8])] = []
            try rows.scan(KeyRange(prefix: StorageKeys.settingKey("")), reverse: false) { key, value in
                settings.append((key, value))
                return true
            }
            return settings
        } catch {
            throw ServerError(
                .storageFailed,
                "cannot read the settings (security rules) of namespace \(directories.namespace)'s current store with backend \(backend.name): \(error). If it is damaged, move it aside with `rtdb-server --repair \(directories.namespace)` first.",
                underlying: error)
        }
    }

    /// Writes the document into a new store in `staging`, synced and closed.
    private static func stage(
        _ input: InputFile, into staging: String, settings: [(key: [UInt8], value: [UInt8])], options: Options,
        progress: ((Int) -> Void)?
    ) throws(ServerError) -> Report {
        let rows: ChecksummedStore
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
            rows = try StorageEngine.openSealed(try options.backend.openForBulkLoad(staging))
        } catch {
            throw ServerError(.storageFailed, "cannot create a \(options.backend.name) store in \(staging): \(error)", underlying: error)
        }
        var writer = ImportRowWriter(rows: rows, batchBytes: options.batchBytes, serverTime: options.serverTime)
        for setting in settings { writer.copySetting(key: setting.key, value: setting.value) }
        var reader = JSONStreamReader(subtreeBytes: options.subtreeBytes)
        var chunk = [UInt8](repeating: 0, count: options.chunkBytes)
        do {
            defer { try? writer.finish() }
            do {
                while true {
                    let count = try input.read(into: &chunk)
                    if count == 0 { break }
                    for item in try reader.read(chunk[..<count]) { try writer.write(item) }
                    try writer.endOfChunk()
                    progress?(reader.bytesRead)
                }
                for item in try reader.finish() { try writer.write(item) }
            } catch let error as CoreTreeError {
                throw ServerError(.invalidArgument, "\(input.path) cannot be imported: \(error.message)", underlying: error)
            }
            // The one sync (a batch with an operation in it: every backend syncs one). The size
            // row of a client's cache has no place in a server's store.
            writer.removeRow(key: StorageKeys.cacheSize)
            try writer.flush(durable: true)
            try writer.finish()
            try rows.close()
            try NamespaceDirectories.syncTree(staging)
        } catch let error as ServerError {
            try? rows.close()
            throw error
        } catch {
            try? rows.close()
            throw ServerError(.storageFailed, "cannot write the new store in \(staging): \(error)", underlying: error)
        }
        return Report(bytes: reader.bytesRead, rows: writer.rowCount, rowBytes: writer.rowBytes, settingsKept: settings.count, seconds: 0)
    }
}

/// The file an import reads, read in chunks with `read(2)`.
final class InputFile {
    let path: String
    private let descriptor: Int32

    init(path: String) throws(ServerError) {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ServerError(.storageFailed, "cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    /// Fills the front of `buffer`; returns how many bytes, 0 at the end of the file.
    func read(into buffer: inout [UInt8]) throws(ServerError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return count }
            if errno != EINTR { throw ServerError(.storageFailed, "cannot read \(path): \(String(cString: strerror(errno)))") }
        }
    }

    func close() { closeDescriptor(descriptor) }
}

/// `read(2)` and `close(2)`, named apart from the methods that call them.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
