public import Foundation

/// The path of an executable built next to the running test binary.
public func builtExecutable(named name: String) throws -> URL {
    let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = testBinary.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    throw SupportFailure("\(name) is not built next to \(testBinary.path); run `swift build --build-tests` first")
}

/// A child process whose standard output is collected as it arrives.
public final class ChildProcess: @unchecked Sendable {
    // `buffer` and `outputEnded` are guarded by `lock`.
    public let process = Process()
    private let lock = NSLock()
    // Bytes, not `Data`: LeakSanitizer does not follow the reference a `Data` too large to be
    // stored inline keeps to its storage, and reports the storage of one still alive at exit (a
    // server process whose shutdown was under way) as a direct leak: reproduced with a 20-line
    // program (20 bytes and more reported, 10 not; nothing when the values are released first).
    private var buffer: [UInt8] = []
    private var outputEnded = false

    /// Starts `executable` with `arguments`; standard error is discarded unless `showErrors`
    /// (passed to the test's own) or `collectErrors` (collected with standard output).
    public init(executable: URL, arguments: [String], environment: [String: String]? = nil, showErrors: Bool = false,
                collectErrors: Bool = false) throws {
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = collectErrors ? output : showErrors ? FileHandle.standardError : FileHandle.nullDevice
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            // At end of file, stop watching the descriptor: a handler still armed when the
            // handle is closed can act on a descriptor number the process has since reused
            // (a NIO socket, in a test process full of servers).
            if data.isEmpty { handle.readabilityHandler = nil }
            guard let self else { return }
            self.lock.withLock {
                self.buffer.append(contentsOf: data)
                if data.isEmpty { self.outputEnded = true }
            }
        }
        outputPipe = output
        try process.run()
    }

    private var outputPipe: Pipe?

    /// Everything written to standard output so far.
    public var output: String { lock.withLock { String(decoding: buffer, as: UTF8.self) } }

    /// Waits (polling, without blocking a thread) until the output contains `text`.
    public func waitForOutput(_ text: String, timeout: Duration = .seconds(20)) async throws {
        // A process that exits right after printing (one that kills itself, say) may end before
        // its last bytes are read: wait for the end of its output too, not only for its exit.
        let seen = try await waitUntil(timeout: timeout) {
            self.output.contains(text) || (!self.process.isRunning && self.lock.withLock { self.outputEnded })
        }
        guard seen, output.contains(text) else {
            throw SupportFailure("\(process.executableURL?.lastPathComponent ?? "child") never printed \"\(text)\"; it printed: \(output.suffix(2000))")
        }
    }

    /// Waits for the process to end by itself.
    ///
    /// - Returns: the exit status when the process exited normally (not killed by a signal).
    @discardableResult
    public func waitForExit() async -> Int32? {
        await stop(signal: 0)  // signal 0 sends nothing
    }

    /// Sends `signal` and waits for the process to end.
    ///
    /// It also reaps the child itself (`waitpid`): Foundation's `Process` sometimes never
    /// notices a child's exit (seen with children of tests that start PostgreSQL), and
    /// `isRunning` would then stay true forever.
    ///
    /// - Returns: the exit status when the process exited normally (not killed by a signal).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) async -> Int32? {
        let pid = process.processIdentifier
        if process.isRunning { kill(pid, signal) }
        var status: Int32 = 0
        while process.isRunning {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                outputPipe?.fileHandleForReading.readabilityHandler = nil
                // WIFEXITED / WEXITSTATUS (macros Swift does not import).
                return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
            }
            if reaped < 0 && errno == ECHILD { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}

/// A real rtdb-server process for end-to-end tests, restartable on the same port and data directory.
public final class ServerProcess: @unchecked Sendable {
    public let backend: String
    public let directory: String
    public private(set) var port: Int
    private var child: ChildProcess
    private let extra: [String]

    private init(backend: String, directory: String, port: Int, child: ChildProcess, extra: [String]) {
        self.extra = extra
        self.backend = backend
        self.directory = directory
        self.port = port
        self.child = child
    }

    /// Starts rtdb-server on a free loopback port (or `port`), storing in `directory` (by default a
    /// new one, removed by ``shutDown()`` or else when the test process exits).
    public static func launch(backend: String = "sqlite", directory: String? = nil, port: Int = 0,
                              arguments extra: [String] = []) async throws -> ServerProcess {
        let madeDirectory = directory == nil
        let directory = directory ?? NSTemporaryDirectory() + "rtdb-e2e-\(UUID().uuidString)"
        // A shutDown in a test's `defer { Task { ... } }` may still be under way when the process exits.
        if madeDirectory { removeAtExit(directory) }
        let (child, actualPort) = try await start(backend: backend, directory: directory, port: port, extra: extra)
        return ServerProcess(backend: backend, directory: directory, port: actualPort, child: child, extra: extra)
    }

    private static func start(backend: String, directory: String, port: Int, extra: [String]) async throws -> (ChildProcess, Int) {
        var lastError: (any Error)?
        for _ in 0..<50 {
            let child = try ChildProcess(
                executable: try builtExecutable(named: "rtdb-server"),
                arguments: ["--host", "127.0.0.1", "--port", "\(port)", "--backend", backend, "--data-dir", directory, "--log-level", "error"] + extra)
            do {
                try await child.waitForOutput("://127.0.0.1:")
                let text = child.output
                let range = text.range(of: "://127.0.0.1:")!
                return (child, Int(text[range.upperBound...].prefix { $0.isNumber })!)
            } catch {
                // The port may still be held by the previous process for a moment: try again.
                lastError = error
                await child.stop(signal: SIGKILL)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        throw lastError ?? SupportFailure("rtdb-server did not start")
    }

    /// The URL a client uses for `namespace`.
    public func databaseURL(namespace: String) -> String { "http://127.0.0.1:\(port)?ns=\(namespace)" }

    /// The REST URL of `path` in `namespace`.
    public func restURL(_ path: String, namespace: String) -> String { "http://127.0.0.1:\(port)/\(path).json?ns=\(namespace)" }

    /// The value of an unlabelled counter or gauge on the server's `/metrics` page (nil when absent).
    public func metric(_ name: String) async throws -> Double? {
        let page = try await restRequest("GET", "http://127.0.0.1:\(port)/metrics").body
        for line in page.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Returns once the server has finished `count` more sweeps for dead nodes' onDisconnect
    /// writes than it had when called: whatever they would claim has been claimed and run.
    public func waitForOrphanSweeps(_ count: Int, timeout: Duration = .seconds(30)) async throws {
        let start = try await metric("rtdb_orphan_sweeps_total") ?? 0
        let done = try await waitUntil(timeout: timeout) {
            try await self.metric("rtdb_orphan_sweeps_total") ?? 0 >= start + Double(count)
        }
        if !done { throw SupportFailure("rtdb-server finished no \(count) orphaned-onDisconnect sweeps within \(timeout)") }
    }

    /// Reads `path` over REST, as JSON.
    public func read(_ path: String, namespace: String, auth: String? = nil) async throws -> Any? {
        try await restRequest("GET", restURL(path, namespace: namespace) + (auth.map { "&auth=\($0)" } ?? "")).json
    }

    /// Writes JSON text at `path` over REST.
    public func write(_ path: String, json: String, namespace: String) async throws {
        let reply = try await restRequest("PUT", restURL(path, namespace: namespace), body: json)
        guard reply.status == 200 else { throw SupportFailure("PUT \(path) failed: \(reply.status) \(reply.body)") }
    }

    /// Stops the server (SIGKILL when `hard`), keeping its data directory.
    public func stop(hard: Bool = false) async {
        await child.stop(signal: hard ? SIGKILL : SIGTERM)
    }

    /// Starts it again on the same port and data.
    public func restart() async throws {
        await stop()
        (child, port) = try await ServerProcess.start(backend: backend, directory: directory, port: port, extra: extra)
    }

    /// Stops it and deletes its data.
    public func shutDown() async {
        await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
