/// Where a namespace counts what an operator watches: rule denials, store commits, sweeps for
/// dead nodes' onDisconnect writes, store checks and damage. The server's transports implement it over their metrics
/// exporter; the core knows none.
package protocol NamespaceMetrics: Sendable {
    /// Counts a read or write (`operation`) the rules refused.
    func denied(_ operation: String)
    /// Records how long one store commit (a group of writes, durable) took.
    func storeCommitted(in duration: Duration)
    /// Counts a finished sweep for dead nodes' onDisconnect writes.
    func orphanSweepFinished()
    /// Records what every open namespace keeps resident together.
    func cacheUsage(_ total: CacheBudget.Usage)
    /// Counts lookups of data: answered from memory (`hit`) or loaded from the store.
    func cacheLookups(hits: Int, misses: Int)
    /// Counts a finished background check of a namespace's store, by how it ended.
    func storeChecked(_ result: StoreCheckResult)
    /// Counts a namespace marked damaged (by its background check, or by an operation whose read
    /// or commit found damage).
    func namespaceDamaged()
}
