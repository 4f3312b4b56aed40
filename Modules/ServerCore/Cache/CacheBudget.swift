import Synchronization

/// The memory budget every open namespace of a process shares for its resident data
/// (`--cache-bytes`), and what they use of it.
///
/// Each namespace reports its use after each operation and evicts its own least recently used
/// data down to what the budget leaves it (the budget less what the others use). Held data
/// (what listeners watch) is never evicted, so the total can exceed the budget while clients
/// watch more than it allows.
package final class CacheBudget: Sendable {
    /// What one namespace uses.
    package struct Usage: Sendable, Equatable {
        /// Estimated bytes of its resident data.
        package var bytes = 0
        /// Of those, the bytes listeners hold.
        package var heldBytes = 0
        /// Its resident subtrees.
        package var entries = 0

        /// A usage.
        package init(bytes: Int = 0, heldBytes: Int = 0, entries: Int = 0) {
            self.bytes = bytes
            self.heldBytes = heldBytes
            self.entries = entries
        }
    }

    /// The bytes all namespaces may keep resident together.
    package let limit: Int
    private let usage = Mutex<[String: Usage]>([:])
    private let metrics: (any NamespaceMetrics)?

    /// The default budget: 128 MiB of estimated resident data, a few hundred MB of process memory
    /// (see the README's section on memory).
    package static let defaultLimit = 128 * 1024 * 1024

    /// A budget of `limit` bytes, reporting the totals to `metrics`.
    package init(limit: Int = CacheBudget.defaultLimit, metrics: (any NamespaceMetrics)? = nil) {
        self.limit = limit
        self.metrics = metrics
    }

    /// The bytes `namespace` may keep: the limit less what the others use (never below zero).
    package func share(of namespace: String) -> Int {
        let others = usage.withLock { $0.reduce(0) { $0 + ($1.key == namespace ? 0 : $1.value.bytes) } }
        return max(0, limit - others)
    }

    /// Records what `namespace` uses now (`nil`: it closed).
    package func report(_ namespace: String, _ current: Usage?) {
        let total = usage.withLock { all -> Usage in
            all[namespace] = current
            return CacheBudget.sum(all)
        }
        metrics?.cacheUsage(total)
    }

    /// What all namespaces use together.
    package var total: Usage { usage.withLock { CacheBudget.sum($0) } }

    private static func sum(_ all: [String: Usage]) -> Usage {
        all.values.reduce(into: Usage()) {
            $0.bytes += $1.bytes
            $0.heldBytes += $1.heldBytes
            $0.entries += $1.entries
        }
    }
}
