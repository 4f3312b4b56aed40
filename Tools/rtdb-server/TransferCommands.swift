import ArgumentParser
#if canImport(Glibc)
import CMallocInfo
#endif
import Foundation
import Logging
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite
import PostgresServerStore
import ServerCore
import Synchronization

/// The options an import, an export and a check share: which namespace, where, on which backend.
struct NamespaceLocation: ParsableArguments {
    @Option(help: "The namespace (as in ?ns=).")
    var namespace: String

    @Option(help: "The server's data directory (its --data-dir).")
    var dataDir = "./.rtdb-data"

    @Option(help: "The namespace's storage backend (the server's --backend): sqlite, lmdb or leveldb; export also takes postgres.")
    var backend = "sqlite"

    /// The backend named by `--backend`.
    func storageBackend() throws -> StorageBackend {
        do {
            return try StorageBackends([.sqlite, .lmdb, .leveldb]).backend(named: backend)
        } catch {
            throw ValidationError("--backend must be sqlite, lmdb or leveldb (import, export and check work on the embedded stores), not \(backend)")
        }
    }
}

/// `rtdb-server import`: replaces a namespace's data with a JSON export, at disk speed.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replace an embedded namespace's data with a JSON export (Firebase's, or rtdb-server export's) of any size.",
        discussion: """
            The file is read in chunks and written into a new store beside the namespace's, synced once and then \
            switched in, so the namespace holds its old data or the new, whatever happens; its security rules are kept. \
            Refused while a server uses the data directory. Reads only the command line (not RTDB_* or --config).
            """)

    @OptionGroup var location: NamespaceLocation

    @Argument(help: "The JSON file to import.")
    var file: String

    @Option(name: .customLong("postgres-url"), help: ArgumentHelp(
        "Import into the namespace in this PostgreSQL database (postgres://user:password@host:5432/db) instead of the data directory: one transaction, while the nodes keep serving.",
        valueName: "url"))
    var postgresURL: String?

    @Option(help: .hidden) var subtreeBytes: Int?
    @Option(help: .hidden) var batchBytes: Int?
    @Flag(help: ArgumentHelp("Switch the store in by moving the old one aside first, even where directories can be exchanged.", visibility: .hidden))
    var noExchange = false

    func run() async throws {
        if let postgresURL {
            try await importIntoPostgres(postgresURL)
            return
        }
        ImportCommand.tuneAllocators()
        var options = NamespaceImport.Options(namespace: location.namespace, dataDirectory: location.dataDir, backend: try location.storageBackend())
        if let subtreeBytes { options.subtreeBytes = subtreeBytes }
        if let batchBytes { options.batchBytes = batchBytes }
        options.exchange = !noExchange
        let file = self.file
        let total = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let meter = ProgressMeter(total: total)
        let report = try await onOwnThread { [options] in
            try CommandFailure.saying { () throws(ServerError) in try NamespaceImport.run(file: file, options: options) { meter.show($0) } }
        }
        meter.end()
        print(String(
            format: "imported %.1f MB (%@ rows, %.1f MB) into namespace %@ (%@ in %@) in %.2f s: %.1f MB/s%@",
            Double(report.bytes) / 1e6, grouped(report.rows), Double(report.rowBytes) / 1e6, location.namespace, location.backend,
            location.dataDir, report.seconds, report.megabytesPerSecond,
            report.settingsKept > 0 ? ", \(report.settingsKept) settings (rules) kept" : ""))
    }
}

extension ImportCommand {
    /// Imports into PostgreSQL (``PostgresServerStore/PostgresImport``).
    private func importIntoPostgres(_ url: String) async throws {
        try CommandFailure.saying { () throws(ServerError) in try NamespaceRegistry.checkName(location.namespace) }
        var logger = Logger(label: "rtdb-server.import")
        logger.logLevel = .error
        let total = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let meter = ProgressMeter(total: total)
        let report: PostgresImport.Report
        do {
            report = try await PostgresImport.run(
                file: file, namespace: location.namespace, url: url, logger: logger,
                serverTime: Int64(Date().timeIntervalSince1970 * 1000), batchBytes: batchBytes ?? 8 << 20) { meter.show($0) }
        } catch let error as PostgresStoreError {
            meter.end()
            throw CommandFailure(description: error.code == .invalidInput ? error.message : error.description)
        }
        meter.end()
        print(String(
            format: "imported %.1f MB (%@ rows) into namespace %@ (PostgreSQL) in %.2f s: %.1f MB/s; the nodes serving it reload what they hold",
            Double(report.bytes) / 1e6, grouped(report.rows), location.namespace, report.seconds, report.megabytesPerSecond))
    }

    /// Settings for a process that only imports (they are process-wide, so the command, not the
    /// library, makes them), each measured on 200 MB of gen-chat-data:
    /// - glibc without fast bins: an import allocates and frees tens of millions of small blocks
    ///   between larger ones, and each larger allocation first consolidated the fast bins
    ///   (`malloc_consolidate`, 5% of the CPU); without them, about 10% less CPU.
    /// - SQLite without its memory statistics, whose global lock every allocation took (a tenth of
    ///   the writing thread's time).
    static func tuneAllocators() {
        #if canImport(Glibc)
        _ = mallopt(M_MXFAST, 0)
        #endif
        SQLiteStore.disableMemoryStatistics()
    }
}

/// `rtdb-server export`: writes a namespace's data as JSON in export format.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a namespace's data as JSON in export format (priorities kept), to a file or standard output, while the server serves or not.",
        discussion: """
            The file is one point in time: each write is in it whole or not at all. With no server on the data directory, \
            the store is read directly. While a server holds the directory, the server exports it from a snapshot of the \
            store (GET /.export.json?ns=NAME, admin only) and keeps serving: the address comes from the directory's lock \
            file, or --server. The credential is the secret in --auth-secret-file, else the loopback-only admin token owner. \
            With --backend postgres, the namespace is read from PostgreSQL in one snapshot while nodes serve it. \
            Memory stays small whatever the namespace's size. Reads only the command line (not RTDB_* or --config).
            """)

    @OptionGroup var location: NamespaceLocation

    @Option(help: "Export through the rtdb-server at this URL (http://127.0.0.1:8080), instead of the data directory.")
    var server: String?

    @Option(help: "The file holding the admin secret (the server's --auth-secret-file), to export through a server; without it, the loopback-only admin token is used.")
    var authSecretFile: String?

    @Option(help: "With --backend postgres: the database, postgres://user:password@host:5432/database.")
    var postgresUrl: String?

    @Argument(help: "The file to write (written whole or not at all); standard output when omitted.")
    var file: String?

    func run() async throws {
        let (namespace, file) = (location.namespace, self.file)
        let started = ContinuousClock.now
        let (bytes, rows, via): (Int, Int?, String)
        if location.backend == "postgres" {
            (bytes, rows, via) = (try await exportFromPostgres(), nil, "PostgreSQL")
        } else if let server {
            (bytes, rows, via) = (try await exportFromServer(server), nil, "the server at \(server)")
        } else {
            let (dataDirectory, backend) = (location.dataDir, try location.storageBackend())
            let offline = try await onOwnThread { () -> Result<NamespaceExport.Report, ServerError> in
                do throws(ServerError) {
                    return .success(try NamespaceExport.run(namespace: namespace, dataDirectory: dataDirectory, backend: backend, to: file))
                } catch {
                    return .failure(error)
                }
            }
            switch offline {
            case .success(let report):
                (bytes, rows, via) = (report.bytes, report.rows, "its \(location.backend) store")
            case .failure(let error) where error.code == .unavailable:
                // A server holds the directory: it exports, from a snapshot, and keeps serving.
                guard let address = DataDirectoryLock.serverAddress(in: dataDirectory) else {
                    throw CommandFailure(description: "\(error.message); pass --server URL to export through it")
                }
                (bytes, rows, via) = (try await exportFromServer(address), nil, "the server at \(address)")
            case .failure(let error):
                throw CommandFailure(description: error.message)
            }
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let line = String(
            format: "exported namespace %@%@ from %@ to %@: %.1f MB in %.2f s: %.1f MB/s\n",
            namespace, rows.map { " (\(grouped($0)) rows)" } ?? "", via, file ?? "standard output", Double(bytes) / 1e6, seconds,
            seconds > 0 ? Double(bytes) / 1e6 / seconds : 0)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Streams the namespace from the server at `address`.
    private func exportFromServer(_ address: String) async throws -> Int {
        var credential = "owner"
        if let authSecretFile {
            guard let secret = try? String(contentsOfFile: authSecretFile, encoding: .utf8) else {
                throw CommandFailure(description: "cannot read the admin secret from \(authSecretFile)")
            }
            credential = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return try await ServerExportDownload.run(server: address, namespace: location.namespace, credential: credential, to: file).bytes
    }

    /// Streams the namespace from PostgreSQL, in one snapshot, into the file.
    private func exportFromPostgres() async throws -> Int {
        guard let postgresUrl, !postgresUrl.isEmpty else {
            throw ValidationError("--backend postgres needs --postgres-url postgres://user:password@host:5432/database")
        }
        var logger = Logger(label: "rtdb-server.export")
        logger.logLevel = .warning
        let provider = try PostgresStoreProvider(url: postgresUrl, logger: logger)
        let namespace = location.namespace
        do {
            let destination = try CommandFailure.saying { () throws(ServerError) in try ExportFile(destination: file) }
            var bytes = 0
            try await provider.exportNamespace(namespace) { piece in
                bytes += piece.count
                try CommandFailure.saying { () throws(ServerError) in try destination.write(piece) }
            }
            try CommandFailure.saying { () throws(ServerError) in try destination.complete() }
            await provider.shutdown()
            return bytes
        } catch let error as CommandFailure {
            await provider.shutdown()
            throw error
        } catch {
            await provider.shutdown()
            throw CommandFailure(description: "cannot export namespace \(namespace) from PostgreSQL: \(error)")
        }
    }
}

/// A failed import or export, printed as its message alone (`Error: <message>`).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    /// `work`'s result, or its error as a ``CommandFailure``.
    static func saying<T>(_ work: () throws(ServerError) -> T) throws(CommandFailure) -> T {
        do {
            return try work()
        } catch {
            throw CommandFailure(description: error.message)
        }
    }
}

/// Runs `work` on a thread of its own (an import blocks on the disk for minutes) and awaits it.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = "rtdb-transfer"
        thread.start()
    }
}

/// `1234567` as `1,234,567`.
func grouped(_ value: Int) -> String {
    let digits = String(value)
    var result = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return result
}

/// A progress line on standard error, rewritten in place, when standard error is a terminal.
final class ProgressMeter: Sendable {
    private let total: Int
    private let started = ContinuousClock.now
    private let lastShown = Mutex<ContinuousClock.Instant?>(nil)
    private let enabled = isatty(STDERR_FILENO) != 0

    init(total: Int) { self.total = total }

    func show(_ bytes: Int) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let due = lastShown.withLock { last in
            guard last.map({ now - $0 >= .milliseconds(500) }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        let seconds = (now - started) / .seconds(1)
        let percent = total > 0 ? String(format: " of %.1f MB (%.0f%%)", Double(total) / 1e6, 100 * Double(bytes) / Double(total)) : ""
        let line = String(format: "\rread %.1f MB%@, %.1f MB/s   ", Double(bytes) / 1e6, percent, seconds > 0 ? Double(bytes) / 1e6 / seconds : 0)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func end() {
        if enabled && lastShown.withLock({ $0 != nil }) { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
