// presence-demo: the presence example of Firebase's offline page, run with PresenceTracker
// against rtdb-server. Device processes come and go (one is killed with SIGKILL, one stops
// cleanly), and a watcher prints who is online, how long each departure took to be seen, and
// when each user was last online.
//
//   Tools/run                       # in one terminal
//   swift run presence-demo --url 'http://127.0.0.1:9000?ns=demo'
import ArgumentParser
import Dispatch
import Foundation
import Glibc
import RealtimeDatabase

@main
struct PresenceDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence-demo",
        abstract: "Presence with PresenceTracker against rtdb-server: devices come and go, one is killed with SIGKILL.",
        subcommands: [Run.self, Device.self], defaultSubcommand: Run.self)
}

/// Writes a line to standard output at once (a test reads it as it comes).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Start device processes, watch who is online, kill one, stop one.")

    @Option(help: "The database URL (http://host:port?ns=<namespace>).") var url: String
    @Option(help: "The presence root.") var root: String = "presence"

    static let users = ["ann", "bob", "cy"]

    func run() async throws {
        let watcher = try Database(url: url)
        defer { watcher.shutdown() }
        let log = StateBox()
        let watching = Task {
            var last: [String: Int]?
            for try await state in PresenceTracker.states(in: watcher, root: root) {
                log.set(state)
                if state.online != last {
                    last = state.online
                    let names = state.online.keys.sorted().map { "\($0) (\(state.online[$0]!) device\(state.online[$0]! == 1 ? "" : "s"))" }
                    say("online: " + (names.isEmpty ? "nobody" : names.joined(separator: ", ")))
                }
            }
        }
        defer { watching.cancel() }

        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var devices: [String: Process] = [:]
        for user in Run.users {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["device", "--url", url, "--root", root, "--user", user]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            devices[user] = process
        }
        defer { for process in devices.values where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        guard await log.wait({ Set($0.online.keys) == Set(Run.users) }) else {
            throw ValidationError("not every device came online within 30 s")
        }

        for (user, signal, how) in [("bob", SIGKILL, "killed with SIGKILL"), ("cy", SIGTERM, "stopped cleanly (SIGTERM, tracker.stop())")] {
            let start = ContinuousClock.now
            kill(devices[user]!.processIdentifier, signal)
            guard await log.wait({ $0.online[user] == nil }) else {
                throw ValidationError("\(user)'s device was still online 30 s after it was \(how)")
            }
            let elapsed = ContinuousClock.now - start
            say("\(user)'s device \(how): seen offline after \(Int(elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000)) ms")
        }
        guard await log.wait({ $0.lastOnline["bob"] != nil && $0.lastOnline["cy"] != nil }) else {
            throw ValidationError("lastOnline was not recorded for bob and cy")
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for (user, milliseconds) in (log.latest?.lastOnline ?? [:]).sorted(by: { $0.key < $1.key }) {
            say("last seen: \(user) at \(formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))) (server time)")
        }
        say("done")
    }
}

struct Device: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "One device: tracks its user's presence until killed; SIGTERM stops it cleanly.")

    @Option(help: "The database URL.") var url: String
    @Option(help: "The presence root.") var root: String = "presence"
    @Option(help: "The user this device belongs to.") var user: String

    func run() async throws {
        let database = try Database(url: url)
        let tracker = PresenceTracker(database: database, root: root, user: user)
        signal(SIGTERM, SIG_IGN)
        let stopping = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        stopping.setEventHandler {
            Task {
                try? await tracker.stop()
                database.shutdown()
                Glibc.exit(0)
            }
        }
        stopping.resume()
        defer { stopping.cancel() }  // keeps the signal source alive while the device runs
        tracker.start()
        say("tracking \(user)")
        // A device whose demo has gone (reparented to init) goes too, rather than run forever.
        let parent = getppid()
        while getppid() == parent { try await Task.sleep(for: .milliseconds(500)) }
    }
}

/// The watcher's latest state, for waiting on.
final class StateBox: @unchecked Sendable {
    private let lock = NSLock()
    private var state: PresenceState?
    func set(_ value: PresenceState) { lock.withLock { state = value } }
    var latest: PresenceState? { lock.withLock { state } }

    /// Waits up to 30 s for the latest state to satisfy `condition`.
    func wait(_ condition: (PresenceState) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let state = latest, condition(state) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}
