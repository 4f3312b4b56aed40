import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An rtdb-server the load generator started: a child process on a free port with a fresh data
/// directory, its stderr captured to a log file next to that directory.
final class ServerProcess {
    let process: Process
    let port: Int
    let workDirectory: URL
    let logFile: URL

    var pid: Int32 { process.processIdentifier }

    private init(process: Process, port: Int, workDirectory: URL, logFile: URL) {
        self.process = process
        self.port = port
        self.workDirectory = workDirectory
        self.logFile = logFile
    }

    /// The rtdb-server in the same directory as this executable.
    static func defaultExecutable() -> String {
        let argument = CommandLine.arguments[0]
        var directory: URL
        if argument.contains("/") {
            directory = URL(fileURLWithPath: argument).deletingLastPathComponent()
        } else if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directory = URL(fileURLWithPath: resolved).deletingLastPathComponent()
        } else {
            directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        }
        directory.appendPathComponent("rtdb-server")
        return directory.path
    }

    /// Starts `executable` with `--port 0` and waits for the line announcing its port.
    static func start(executable: String, backend: String, extraArguments: [String] = []) async throws -> ServerProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw LoadgenError.server("no executable server at \(executable) (build it: swift build -c release --product rtdb-server, or pass --server)")
        }
        let work = FileManager.default.temporaryDirectory
            .appendingPathComponent("rtdb-loadgen-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let data = work.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let log = work.appendingPathComponent("server.log")
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw LoadgenError.server("cannot create \(log.path)")
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port", "0", "--backend", backend, "--data-dir", data.path] + extraArguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        Report.line("server: started \(executable) (pid \(process.processIdentifier)), backend \(backend), data in \(data.path), log \(log.path)")

        let pid = process.processIdentifier
        let announcement = try await readAnnouncement(stdout.fileHandleForReading, pid: pid, timeoutSeconds: 60)
        Report.line("server: \(announcement.line)")
        return ServerProcess(process: process, port: announcement.port, workDirectory: work, logFile: log)
    }

    /// Reads stdout on a dispatch thread until `listening on http://<host>:<port>`, then keeps
    /// draining it so the server never blocks on a full pipe. Kills the server on timeout.
    private static func readAnnouncement(
        _ handle: FileHandle, pid: Int32, timeoutSeconds: Int
    ) async throws -> (line: String, port: Int) {
        let settled = OnceFlag()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds)) {
                if settled.claim() {
                    kill(pid, SIGKILL)
                    continuation.resume(throwing: LoadgenError.server("the server did not announce its port within \(timeoutSeconds) s"))
                }
            }
            DispatchQueue.global().async {
                var pending: [UInt8] = []
                var announced = false
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    if announced { continue }
                    pending.append(contentsOf: chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        let line = String(decoding: pending[..<newline], as: UTF8.self)
                        pending.removeSubrange(...newline)
                        guard let port = announcedPort(in: line) else { continue }
                        announced = true
                        if settled.claim() { continuation.resume(returning: (line, port)) }
                        break
                    }
                }
                if settled.claim() {
                    continuation.resume(throwing: LoadgenError.server("the server exited before announcing its port; see its log"))
                }
            }
        }
    }

    /// The port in `... listening on http://<host>:<port> ...`.
    static func announcedPort(in line: String) -> Int? {
        guard let range = line.range(of: "listening on http://") else { return nil }
        let rest = line[range.upperBound...]
        let authority = rest.prefix { $0 != " " && $0 != "/" }
        guard let colon = authority.lastIndex(of: ":") else { return nil }
        return Int(authority[authority.index(after: colon)...].prefix { $0.isNumber })
    }

    /// Stops the server with SIGTERM (SIGKILL after 30 s), reports how it ended and what it logged,
    /// and removes the data directory unless `keepData`.
    func stop(keepData: Bool) async {
        let started = Monotonic.nanoseconds()
        if process.isRunning { kill(pid, SIGTERM) }
        var waited = 0
        while process.isRunning && waited < 3000 {
            try? await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        if process.isRunning {
            Report.line("server: still running 30 s after SIGTERM; sending SIGKILL")
            kill(pid, SIGKILL)
            while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        }
        let seconds = Monotonic.milliseconds(from: started, to: Monotonic.nanoseconds()) / 1000
        let how = process.terminationReason == .exit ? "exit status" : "signal"
        Report.line("server: stopped after SIGTERM in \(Format.decimal(seconds)) s (\(how) \(process.terminationStatus))")
        summarizeLog()
        if keepData {
            Report.line("server: data kept in \(workDirectory.path)")
        } else {
            try? FileManager.default.removeItem(at: workDirectory.appendingPathComponent("data"))
        }
    }

    /// Prints how many lines the server logged at each notable level, and the first few of them.
    private func summarizeLog() {
        guard let text = try? String(contentsOf: logFile, encoding: .utf8) else { return }
        let lines = text.split(separator: "\n")
        let notable = lines.filter { line in
            line.contains(" warning ") || line.contains(" error ") || line.contains(" critical ")
        }
        Report.line("server log: \(lines.count) lines, \(notable.count) at warning or above (\(logFile.path))")
        var shown: [String: Int] = [:]
        var order: [String] = []
        for line in notable {
            // Group by the text after the level, without the timestamp.
            let key = String(line.drop { $0 != " " }.prefix(220))
            if shown[key] == nil { order.append(key) }
            shown[key, default: 0] += 1
        }
        for key in order.prefix(10) {
            Report.line("  \(shown[key]!)× \(key)")
        }
    }
}

/// Errors the load generator reports.
enum LoadgenError: Error, CustomStringConvertible {
    case server(String)
    case protocolViolation(String)
    case connectionEnded(String)

    var description: String {
        switch self {
        case .server(let message): "server: \(message)"
        case .protocolViolation(let message): "protocol: \(message)"
        case .connectionEnded(let message): "connection ended: \(message)"
        }
    }
}
