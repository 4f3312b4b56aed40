import ArgumentParser
import Foundation

/// `rtdb-loadgen`: drives an rtdb-server over the v5 WebSocket protocol and prints benchmark figures.
///
/// Each subcommand starts its own server (a fresh data directory, a free port) unless `--port`
/// names one that is already running.
@main
struct LoadgenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-loadgen",
        abstract: "Load generator for rtdb-server: acknowledged writes/s, fan-out latency, idle connection memory.",
        subcommands: [WritesCommand.self, FanoutCommand.self, IdleCommand.self])
}

/// Options every benchmark shares: which server to use and how to reach it.
struct CommonOptions: ParsableArguments {
    @Option(help: "The rtdb-server executable to start (default: rtdb-server next to this binary).")
    var server: String?

    @Option(help: "Use an already running server on this port instead of starting one.")
    var port: Int?

    @Option(help: "The host to connect to.")
    var host = "127.0.0.1"

    @Option(help: "The pid of an already running server (for its RSS); only with --port.")
    var serverPid: Int32?

    @Option(help: "The storage backend of a started server: sqlite, lmdb, leveldb, memory or postgres.")
    var backend = "sqlite"

    @Option(help: "Start this many nodes sharing PostgreSQL (--postgres-url); clients are spread over them in turn.")
    var nodes = 1

    @Option(help: "The PostgreSQL database of --backend postgres or --nodes > 1 (also RTDB_POSTGRES_URL).")
    var postgresUrl: String?

    @Option(help: "The namespace (?ns=) to use.")
    var namespace = "bench"

    @Option(help: "How many connections may be opening at once.")
    var connectConcurrency = 128

    @Flag(help: "Keep the started server's data directory instead of deleting it.")
    var keepData = false

    /// Runs `body` against the configured server (started here, or already running), then stops a
    /// started server whatever happened.
    func withServer(_ body: (ServerTarget) async throws -> Void) async throws {
        _ = Monotonic.nanoseconds()
        let limit = SystemLimits.raiseOpenFileLimit()
        Report.line("open files limit: soft \(limit.soft), hard \(limit.hard)")
        if let port {
            let target = ServerTarget(host: host, port: port, pid: serverPid, namespace: namespace)
            Report.line("server: already running at \(host):\(port)\(serverPid.map { " (pid \($0))" } ?? "")")
            try await body(target)
            return
        }
        let executable = server ?? ServerProcess.defaultExecutable()
        var started: [ServerProcess] = []
        let shared = nodes > 1 || backend == "postgres"
        var extra: [String] = []
        if shared {
            guard let url = postgresUrl ?? ProcessInfo.processInfo.environment["RTDB_POSTGRES_URL"] else {
                throw LoadgenError.server("--nodes > 1 and --backend postgres need --postgres-url (or RTDB_POSTGRES_URL)")
            }
            extra = ["--postgres-url", url]
        }
        do {
            for _ in 0..<max(nodes, 1) {
                started.append(try await ServerProcess.start(executable: executable, backend: shared ? "postgres" : backend, extraArguments: extra))
            }
        } catch {
            for process in started { await process.stop(keepData: keepData) }
            throw error
        }
        if started.count > 1 { Report.line("nodes: \(started.count) on PostgreSQL, ports \(started.map { String($0.port) }.joined(separator: ", "))") }
        let target = ServerTarget(host: host, port: started[0].port, pid: started[0].pid, namespace: namespace,
                                  nodePorts: started.map(\.port))
        do {
            try await body(target)
        } catch {
            for process in started { await process.stop(keepData: keepData) }
            throw error
        }
        for process in started { await process.stop(keepData: keepData) }
    }
}

/// Where the benchmark connects.
struct ServerTarget: Sendable {
    var host: String
    var port: Int
    /// The server's process id, when known (needed for its RSS).
    var pid: Int32?
    var namespace: String
    /// Every node's port when several nodes share the namespace (the first is `port`).
    var nodePorts: [Int] = []

    /// The WebSocket URL of the v5 protocol (the first node's).
    var webSocketURL: String { "ws://\(host):\(port)/.ws?v=5&ns=\(namespace)" }

    /// The node client number `client` connects to: the nodes in turn.
    func node(forClient client: Int) -> Int { nodePorts.isEmpty ? 0 : client % nodePorts.count }

    /// The WebSocket URL for client number `client`.
    func webSocketURL(forClient client: Int) -> String {
        nodePorts.isEmpty ? webSocketURL : "ws://\(host):\(nodePorts[node(forClient: client)])/.ws?v=5&ns=\(namespace)"
    }
}

/// `rtdb-loadgen writes`: acknowledged durable writes per second.
struct WritesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "writes",
        abstract: "N clients each keep W puts in flight to distinct paths; reports acknowledged writes/s and ack latency.")

    @OptionGroup var common: CommonOptions

    @Option(name: [.short, .long], help: "Concurrent WebSocket clients.")
    var clients = 100

    @Option(name: [.short, .customLong("in-flight")], help: "Puts each client keeps in flight.")
    var inFlight = 16

    @Option(name: [.short, .long], help: "Measured seconds.")
    var duration = 10.0

    @Option(help: "Warm-up seconds before measuring.")
    var warmup = 2.0

    @Option(help: ArgumentHelp(
        "Another rtdb-server build to measure in turns with this one (--server or the default), each on a fresh server.",
        discussion: "On a shared machine figures drift from minute to minute; runs taken in turns compare two builds fairly."))
    var compareWith: String?

    @Option(help: "With --compare-with: runs of each build.")
    var rounds = 3

    func validate() throws {
        guard clients > 0, inFlight > 0, duration > 0, warmup >= 0 else {
            throw ValidationError("--clients and --in-flight must be positive, --duration > 0, --warmup >= 0")
        }
        if compareWith != nil {
            guard common.port == nil else { throw ValidationError("--compare-with starts both servers; it does not work with --port") }
            guard rounds > 0 else { throw ValidationError("--rounds must be positive") }
        }
    }

    func run() async throws {
        guard let compareWith else {
            _ = try await measure(with: common)
            return
        }
        var builds = [("compared (\(compareWith))", common), ("this build (\(common.server ?? ServerProcess.defaultExecutable()))", common)]
        builds[0].1.server = compareWith
        var measured: [[WritesBenchmark.Measured]] = [[], []]
        for round in 1...rounds {
            for (index, build) in builds.enumerated() {
                Report.line("== round \(round) of \(rounds): \(build.0)")
                measured[index].append(try await measure(with: build.1))
            }
        }
        Report.line("")
        Report.line("RESULT writes, \(rounds) runs of each build in turns:")
        for (index, build) in builds.enumerated() {
            Report.line("  \(build.0): \(ComparedRuns(measured[index]).line)")
        }
        let ratio = ComparedRuns(measured[1]).medianRate / ComparedRuns(measured[0]).medianRate
        Report.line("  this build / compared: \(Format.decimal(ratio))× the median acknowledged writes/s")
    }

    private func measure(with options: CommonOptions) async throws -> WritesBenchmark.Measured {
        var result: WritesBenchmark.Measured?
        try await options.withServer { target in
            let benchmark = WritesBenchmark(
                target: target, clients: clients, inFlight: inFlight, duration: duration, warmup: warmup,
                connectConcurrency: options.connectConcurrency)
            result = try await benchmark.run()
        }
        guard let result else { throw LoadgenError.server("the writes benchmark measured nothing") }
        return result
    }
}

/// Runs of one build, summarised: each run's rate, the median, and server CPU per write.
struct ComparedRuns {
    let runs: [WritesBenchmark.Measured]

    init(_ runs: [WritesBenchmark.Measured]) { self.runs = runs }

    /// The median acknowledged writes per second.
    var medianRate: Double {
        let sorted = runs.map(\.writesPerSecond).sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// `runs 13,199 / 13,524 writes/s, median 13,524; server CPU per write 98 µs (median)`.
    var line: String {
        let rates = runs.map { Format.decimal($0.writesPerSecond, 0) }.joined(separator: " / ")
        let perWrite = runs.compactMap { run in run.serverCores.map { $0 / max(run.writesPerSecond, 1) * 1e6 } }.sorted()
        let cpu = perWrite.isEmpty ? "" : "; server CPU per write \(Format.decimal(perWrite[perWrite.count / 2], 0)) µs (median)"
        return "runs \(rates) writes/s, median \(Format.decimal(medianRate, 0))\(cpu)"
    }
}

/// `rtdb-loadgen fanout`: latency from a put to every listener's push.
struct FanoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "L clients listen on one path; one writer puts a timestamped value every M ms; reports delivery latency.")

    @OptionGroup var common: CommonOptions

    @Option(name: [.short, .long], help: "Listening clients.")
    var listeners = 1000

    @Option(name: [.short, .long], help: "Milliseconds between the writer's puts.")
    var interval = 20.0

    @Option(name: [.short, .long], help: "Seconds the writer writes for.")
    var duration = 10.0

    func validate() throws {
        guard listeners > 0, interval > 0, duration > 0 else {
            throw ValidationError("--listeners, --interval and --duration must be positive")
        }
    }

    func run() async throws {
        try await common.withServer { target in
            let benchmark = FanoutBenchmark(
                target: target, listeners: listeners, intervalMilliseconds: interval, duration: duration,
                connectConcurrency: common.connectConcurrency)
            try await benchmark.run()
        }
    }
}

/// `rtdb-loadgen idle`: server memory per idle connection.
struct IdleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Opens C idle connections, waits for every handshake, reports the server's RSS per connection.")

    @OptionGroup var common: CommonOptions

    @Option(name: [.short, .long], help: "Idle connections to open.")
    var connections = 10_000

    @Option(help: "Seconds to wait after the last handshake before reading the RSS.")
    var settle = 2.0

    func validate() throws {
        guard connections > 0, settle >= 0 else { throw ValidationError("--connections must be positive, --settle >= 0") }
        if common.port != nil && common.serverPid == nil {
            throw ValidationError("idle reads the server's RSS: with --port also give --server-pid")
        }
    }

    func run() async throws {
        try await common.withServer { target in
            let benchmark = IdleBenchmark(
                target: target, connections: connections, settleSeconds: settle,
                connectConcurrency: common.connectConcurrency)
            try await benchmark.run()
        }
    }
}
