import Persistence
import Synchronization

/// Whether a namespace's store is known to be damaged, and how its background check ended.
///
/// A namespace is marked damaged once, by its background check (``EmbeddedServerStore/check()``)
/// or by an operation whose read or commit found damage (a row whose checksum does not match, a
/// page the engine reports corrupt). From then on every operation gets
/// ``ServerError/damagedNamespace(_:cause:)``; the namespace stays open (its listeners keep what
/// they have) until it is closed, and reopening it checks it again.
package final class NamespaceHealth: Sendable {
    private struct State {
        var damage: ServerError?
        var check: Task<StoreCheckResult, Never>?
        var isClosed = false
    }

    private let state = Mutex(State())

    package init() {}

    /// The error every operation gets, once the namespace is damaged; `nil` before.
    package var damage: ServerError? { state.withLock { $0.damage } }

    /// Marks the namespace damaged with `error`; returns whether it was not marked before (so
    /// the caller logs and counts it once).
    package func markDamaged(_ error: ServerError) -> Bool {
        state.withLock { state in
            guard state.damage == nil else { return false }
            state.damage = error
            return true
        }
    }

    /// Keeps the background check so ``backgroundCheckResult()`` can await it.
    func started(_ check: Task<StoreCheckResult, Never>) {
        state.withLock { $0.check = check }
    }

    /// Whether the namespace was closed (a check ending after that reports nothing).
    var isClosed: Bool { state.withLock { $0.isClosed } }

    func closed() { state.withLock { $0.isClosed = true } }

    /// How the namespace's background check ended, once it has: `nil` when none was started
    /// (switched off, or a store that has none, such as PostgreSQL's).
    package func backgroundCheckResult() async -> StoreCheckResult? {
        guard let check = state.withLock({ $0.check }) else { return nil }
        return await check.value
    }
}

/// How a background check of a namespace's store ended (the `result` label of
/// `rtdb_store_checks_total`).
package enum StoreCheckResult: String, Sendable, CaseIterable {
    /// Every file and row checked; no damage.
    case ok
    /// Damage found: the namespace is marked damaged.
    case damaged
    /// The check could not finish (the namespace closed meanwhile, or an I/O error).
    case unfinished
}

extension ServerError {
    /// The error every operation on a damaged namespace gets (503, as a namespace whose store
    /// cannot be opened), keeping the storage error, which names the damage, as its cause.
    package static func damagedNamespace(_ name: String, cause: any Error) -> ServerError {
        ServerError(
            .unavailable,
            "The namespace \(name) is out of service: its store is damaged. An operator must check it (rtdb-server check) and move it aside (rtdb-server --repair) or restore it from a backup.",
            underlying: cause)
    }

    /// Whether `error` reports damage on disk (a corrupt page, a row whose checksum does not match).
    static func isDamage(_ error: any Error) -> Bool {
        guard let error = error as? StorageError else { return false }
        return error.code == .corrupt
    }
}
