package import Logging

/// Runs, on this node, the onDisconnect writes of connections whose node died: about once a
/// second it claims them from the shared store (each claim is this node's alone) and submits
/// them as the callers that registered them, so the rules judge them as they run.
///
/// A claim takes the writes out of the shared store, so a write the store could not commit
/// (PostgreSQL slow or unreachable, a namespace that would not open) is kept and tried again at
/// the next sweep, with the rest of its connection's writes after it, until it commits; a write
/// the rules or validation refuse is dropped, as it would be at a disconnect. Claimed writes
/// live in this node's memory until they commit: if this node dies too, they are lost.
package enum OrphanedOnDisconnectRunner {
    package static func run(_ provider: any ServerStoreProvider, registry: NamespaceRegistry, logger: Logger,
                            clock: ServerClock, metrics: (any NamespaceMetrics)?, interval: Duration = .seconds(1)) async {
        var waiting: [OrphanedOnDisconnect] = []
        while !Task.isCancelled {
            try? await clock.sleep(for: interval)
            do {
                waiting += try await provider.claimOrphanedOnDisconnects()
            } catch {
                logger.debug("cannot claim orphaned onDisconnect writes now", metadata: ["error": "\(error)"])
                // What was claimed before is still tried: it may be another namespace's store.
            }
            waiting = await runWrites(of: waiting, logger: logger) { namespace, write in
                do {
                    let database = try await registry.lease(for: namespace)
                    let result = await database.write(write.operation, as: write.caller)
                    await registry.release(database)
                    return result
                } catch {
                    return .failed(ServerError(.unavailable, "Namespace \(namespace) cannot be opened now.", underlying: error))
                }
            }
            metrics?.orphanSweepFinished()
        }
    }

    /// Runs each orphan's writes in order through `write`, and returns what must be tried again:
    /// of each orphan whose write could not be committed (``ServerError/Code/storageFailed``,
    /// ``ServerError/Code/unavailable``), that write and the ones after it.
    package static func runWrites(
        of orphans: [OrphanedOnDisconnect], logger: Logger,
        _ write: (_ namespace: String, HeldWrite) async -> WriteResult
    ) async -> [OrphanedOnDisconnect] {
        var again: [OrphanedOnDisconnect] = []
        for orphan in orphans {
            var next = 0
            while next < orphan.writes.count {
                let held = orphan.writes[next]
                if case .failed(let error) = await write(orphan.namespace, held) {
                    if error.code == .storageFailed || error.code == .unavailable { break }
                    logger.warning("onDisconnect write of a dead node refused",
                                   metadata: ["namespace": "\(orphan.namespace)", "path": "\(held.operation.path)", "error": "\(error)"])
                }
                next += 1
            }
            if next < orphan.writes.count {
                logger.warning("onDisconnect writes of a dead node wait for the store; trying again at the next sweep",
                               metadata: ["namespace": "\(orphan.namespace)", "writes": "\(orphan.writes.count - next)"])
                again.append(OrphanedOnDisconnect(namespace: orphan.namespace, writes: Array(orphan.writes[next...])))
            } else {
                logger.notice("ran the onDisconnect writes of a connection whose node died",
                              metadata: ["namespace": "\(orphan.namespace)", "writes": "\(orphan.writes.count)"])
            }
        }
        return again
    }
}
