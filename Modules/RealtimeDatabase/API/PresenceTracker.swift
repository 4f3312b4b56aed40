import Foundation
import Logging
import Synchronization

/// Presence in one call: the connections-list pattern of Firebase's offline page, done once and
/// without its race.
///
/// Each device of a user is one entry under `<root>/<user>/connections`, and
/// `<root>/<user>/lastOnline` holds the server time the user was last seen:
///
/// ```swift
/// let tracker = PresenceTracker(database: database, user: "morgan")
/// tracker.start()
/// for try await state in PresenceTracker.states(in: database) { print(state.online.keys.sorted()) }
/// ```
///
/// On every connection (the first and each reconnection) the tracker takes a new entry and, in
/// order: asks the server to set `lastOnline` to its own clock and then remove that entry when
/// this client disconnects (the server runs them in that order, so a watcher never sees the entry
/// gone before the new `lastOnline`), waits until the server holds both, and only then marks the
/// entry online.
/// So a client that drops at any moment never leaves an entry behind. The entry of the previous
/// connection is removed too, in case its online mark was still queued when the connection
/// dropped (a queued write is sent again after a reconnect, after the server already ran the old
/// entry's removal). Several devices per user are several entries; the user is online while any
/// remains.
public final class PresenceTracker: Sendable {
    /// The user this tracker marks online.
    public let user: String
    private let database: Database
    private let userRef: DatabaseReference

    private struct State {
        var connectedHandle: DatabaseHandle?
        /// Counts connections (and ``stop()``): an arming that is not the latest gives up.
        var generation = 0
        var entry: DatabaseReference?
    }

    private let state = Mutex(State())

    /// A tracker for `user` under `root` (`presence` by default). Nothing happens until ``start()``.
    public init(database: Database, root: String = "presence", user: String) {
        self.database = database
        self.user = user
        userRef = database.reference(withPath: root).child(user)
    }

    /// Marks this device online now and after every reconnection, until ``stop()``.
    public func start() {
        let connected = database.reference(withPath: ".info/connected")
        let handle = connected.observe(.value) { [weak self] snapshot in
            guard let self, snapshot.value as? Bool == true else { return }
            self.arm()
        }
        state.withLock { $0.connectedHandle = handle }
    }

    /// Takes a new entry for this connection and marks it online once the server holds its
    /// onDisconnect operations.
    private func arm() {
        let entryRef = userRef.child("connections").childByAutoId()
        let (current, previous): (Int, DatabaseReference?) = state.withLock { state in
            state.generation += 1
            defer { state.entry = entryRef }
            return (state.generation, state.entry)
        }
        let lastOnline = userRef.child("lastOnline")
        Task {
            do {
                // A mark of the last connection still queued would be sent again now: remove it.
                if let previous { _ = try await previous.removeValue() }
                _ = try await lastOnline.onDisconnectSetValue(ServerValue.timestamp())
                _ = try await entryRef.onDisconnectRemoveValue()
                guard state.withLock({ $0.generation == current }) else { return }
                _ = try await entryRef.setValue(true)
            } catch {
                // The connection dropped while arming: the next connection arms again.
                ClientLog.logger.info("Presence for \(self.user) not marked on this connection: \(error)")
            }
        }
    }

    /// Stops tracking: cancels this device's onDisconnect operations, then removes its entry and
    /// sets `lastOnline` to the server's clock in one update. Returns once the server has done so.
    public func stop() async throws {
        let (handle, entryRef): (DatabaseHandle?, DatabaseReference?) = state.withLock { state in
            state.generation += 1
            defer {
                state.connectedHandle = nil
                state.entry = nil
            }
            return (state.connectedHandle, state.entry)
        }
        if let handle { await database.repo.removeObserver(withHandle: handle) }
        let lastOnline = userRef.child("lastOnline")
        if let entryRef { _ = try await entryRef.cancelDisconnectOperations() }
        _ = try await lastOnline.cancelDisconnectOperations()
        // One update: a watcher never sees the device gone without the new lastOnline.
        var update: [AnyHashable: Any] = ["lastOnline": ServerValue.timestamp()]
        if let key = entryRef?.key { update["connections/\(key)"] = NSNull() }
        _ = try await userRef.updateChildValues(update)
    }

    /// Who is online under `root`, now and after each change: an `AsyncSequence` that throws if
    /// the server refuses the listen (rules).
    public static func states(in database: Database, root: String = "presence") -> AsyncThrowingStream<PresenceState, any Error> {
        let snapshots = database.reference(withPath: root).values
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await snapshot in snapshots { continuation.yield(PresenceState(snapshot)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// Who is online, as ``PresenceTracker/states(in:root:)`` reports it.
public struct PresenceState: Sendable, Equatable {
    /// Each user with at least one device online, and how many devices.
    public var online: [String: Int]
    /// When each user was last seen (server milliseconds since 1970), for users seen before.
    public var lastOnline: [String: Int64]

    /// A state.
    public init(online: [String: Int] = [:], lastOnline: [String: Int64] = [:]) {
        self.online = online
        self.lastOnline = lastOnline
    }

    /// The state the data under the presence root describes.
    init(_ root: DataSnapshot) {
        self.init()
        for case let user as DataSnapshot in root.children {
            let devices = Int(user.childSnapshot(forPath: "connections").childrenCount)
            if devices > 0 { online[user.key] = devices }
            if let seen = user.childSnapshot(forPath: "lastOnline").value as? NSNumber { lastOnline[user.key] = seen.int64Value }
        }
    }
}
