import CoreTree
import Foundation
@testable import RealtimeDatabase
import TestSupport
import Testing

/// `PresenceTracker` against a real server: several devices per user, a device whose socket
/// closes, a reconnection, and a clean stop, seen through `PresenceTracker.states(in:)`.
@Suite("presence in one call")
struct PresenceTrackerTests {
    @Test func devicesComeAndGoAndLastOnlineIsTheServersClock() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let namespace = Clients.namespace("presence")
        let watcher = try Clients.make(server, namespace: namespace)
        defer { watcher.shutdown() }
        let states = StateLog()
        let watching = Task {
            for try await state in PresenceTracker.states(in: watcher) { states.record(state) }
        }
        defer { watching.cancel() }

        let annPhone = try Clients.make(server, namespace: namespace)
        let annLaptop = try Clients.make(server, namespace: namespace)
        let bob = try Clients.make(server, namespace: namespace)
        defer { bob.shutdown() }
        let trackers = [
            PresenceTracker(database: annPhone, user: "ann"), PresenceTracker(database: annLaptop, user: "ann"),
            PresenceTracker(database: bob, user: "bob"),
        ]
        for tracker in trackers { tracker.start() }
        #expect(try await states.wait { $0.online == ["ann": 2, "bob": 1] }, "saw \(states.latest)")

        // A device whose connection closes is removed by the server's onDisconnect.
        let closed = ContinuousClock.now
        annPhone.shutdown()
        #expect(try await states.wait { $0.online == ["ann": 1, "bob": 1] }, "saw \(states.latest)")
        print("presence: a closed socket was seen by another client after \(ContinuousClock.now - closed)")
        #expect(states.latest?.lastOnline["ann"] != nil, "the phone's disconnect set lastOnline")

        // A reconnection marks the device again; the old entry does not linger.
        annLaptop.goOffline()
        #expect(try await states.wait { $0.online == ["bob": 1] }, "saw \(states.latest)")
        annLaptop.goOnline()
        #expect(try await states.wait { $0.online == ["ann": 1, "bob": 1] }, "saw \(states.latest)")

        // A clean stop removes the entry and records lastOnline by the server's clock.
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try await trackers[2].stop()
        #expect(try await states.wait { $0.online == ["ann": 1] && $0.lastOnline["bob"] != nil }, "saw \(states.latest)")
        let seen = try #require(states.latest?.lastOnline["bob"])
        #expect(abs(seen - before) < 60_000, "lastOnline \(seen) is not near now (\(before))")
        annLaptop.shutdown()
        #expect(try await states.wait { $0.online.isEmpty }, "saw \(states.latest)")
    }
}

extension PresenceTrackerTests {
    /// `presence-demo` against a real server: three device processes come online, one is killed
    /// with SIGKILL and one stops cleanly; the watcher sees both leave and records lastOnline.
    @Test func theDemoSeesAKilledDeviceAndACleanStop() async throws {
        let server = try await ServerProcess.launch(backend: "memory")
        defer { Task { await server.shutDown() } }
        let demo = try ChildProcess(
            executable: try builtExecutable(named: "presence-demo"),
            arguments: ["--url", server.databaseURL(namespace: Clients.namespace("demo"))])
        try await demo.waitForOutput("done", timeout: .seconds(60))
        let output = demo.output
        print(output)
        #expect(output.contains("online: ann (1 device), bob (1 device), cy (1 device)"))
        #expect(output.contains("bob's device killed with SIGKILL: seen offline after"))
        #expect(output.contains("cy's device stopped cleanly"))
        #expect(output.contains("last seen: bob at") && output.contains("last seen: cy at"))
        await demo.stop()
    }
}

/// The states a watcher saw, for waiting on the test's task.
final class StateLog: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [PresenceState] = []
    func record(_ state: PresenceState) { lock.withLock { states.append(state) } }
    var latest: PresenceState? { lock.withLock { states.last } }

    /// Waits until the latest state satisfies `condition`.
    func wait(_ condition: @escaping (PresenceState) -> Bool) async throws -> Bool {
        try await waitUntil(timeout: .seconds(30)) { self.latest.map(condition) ?? false }
    }
}
