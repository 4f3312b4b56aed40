import ArgumentParser
import Foundation
import Persistence
import ServerCore

/// `rtdb-server check`: checks an embedded namespace's store for damage, offline.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check an embedded namespace's store for damage: the backend's whole-file check, then every row's checksum.",
        discussion: """
            Prints what was checked (rows, bytes, seconds) and OK, or what is damaged and where. Exit status: 0 when \
            no damage is found, 1 when damage is, 2 when the check cannot run. Refused while a server uses the data \
            directory (a running server checks each namespace in the background after opening it: see its log and \
            rtdb_store_checks_total). Reads only the command line (not RTDB_* or --config).
            """)

    @OptionGroup var location: NamespaceLocation

    func run() async throws {
        let (namespace, dataDirectory, backend) = (location.namespace, location.dataDir, try location.storageBackend())
        let report: StoreCheck.Report
        do {
            report = try await onOwnThread {
                try CommandFailure.saying { () throws(ServerError) in
                    do throws(ServerError) {
                        return try NamespaceCheck.run(namespace: namespace, dataDirectory: dataDirectory, backend: backend)
                    } catch {
                        guard error.code == .unavailable else { throw error }
                        throw ServerError(error.code, error.message + CheckCommand.serverNote, underlying: error)
                    }
                }
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("Error: \(failure.description)\n".utf8))
            throw ExitCode(2)
        }
        print(CheckCommand.describe(report, namespace: namespace, backend: location.backend, dataDirectory: dataDirectory))
        if !report.isSound { throw ExitCode(1) }
    }

    static let serverNote =
        ". A running server checks each namespace it opens in the background: its log says \"background check\" "
        + "and /metrics counts rtdb_store_checks_total and rtdb_damaged_namespaces_total."

    /// The report as lines for a person.
    static func describe(_ report: StoreCheck.Report, namespace: String, backend: String, dataDirectory: String) -> String {
        var lines = [
            "namespace \(namespace) (\(backend) in \(dataDirectory))",
            "file check: \(report.fileCheck)",
            String(format: "rows: %@ checked (%.1f MB) in %.2f s", grouped(report.rows), Double(report.bytes) / 1e6, report.seconds),
        ]
        if report.isSound {
            lines.append("OK: no damage found")
        } else {
            let rows = report.damagedRows > 0 ? " (\(grouped(report.damagedRows)) rows fail their checksum)" : ""
            lines.append("DAMAGED\(rows):")
            for damage in report.damage { lines.append("  - \(damage)") }
            if report.damagedRows > report.damage.count {
                lines.append("  - … and \(report.damagedRows - report.damage.count) more rows")
            }
            lines.append("Move it aside with rtdb-server --repair \(namespace) --data-dir \(dataDirectory) (it starts empty), or restore it from a backup.")
        }
        return lines.joined(separator: "\n")
    }
}
