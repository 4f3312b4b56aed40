package import Logging

/// Runs, on this node, the onDisconnect writes of connections whose node died: about once a
/// second it claims them from the shared store (each claim is this node's alone) and submits
/// them as the callers that registered them, so the rules judge them as they run.
package enum OrphanedOnDisconnectRunner {
    package static func run(_ provider: any ServerStoreProvider, registry: NamespaceRegistry, logger: Logger,
                    clock: ServerClock, metrics: (any NamespaceMetrics)?, interval: Duration = .seconds(1)) async {
        while !Task.isCancelled {
            try? await clock.sleep(for: interval)
            let claimed: [OrphanedOnDisconnect]
            do {
                claimed = try await provider.claimOrphanedOnDisconnects()
            } catch {
                logger.debug("cannot claim orphaned onDisconnect writes now", metadata: ["error": "\(error)"])
                continue
            }
            defer { metrics?.orphanSweepFinished() }
            for orphan in claimed {
                do {
                    let database = try await registry.lease(for: orphan.namespace)
                    for write in orphan.writes {
                        let result = await database.write(write.operation, as: write.caller)
                        if case .failed(let error) = result {
                            logger.warning("onDisconnect write of a dead node failed",
                                           metadata: ["namespace": "\(orphan.namespace)", "path": "\(write.operation.path)", "error": "\(error)"])
                        }
                    }
                    await registry.release(database)
                    logger.notice("ran the onDisconnect writes of a connection whose node died",
                                  metadata: ["namespace": "\(orphan.namespace)", "writes": "\(orphan.writes.count)"])
                } catch {
                    logger.error("cannot run the onDisconnect writes of a dead node's connection",
                                 metadata: ["namespace": "\(orphan.namespace)", "error": "\(error)"])
                }
            }
        }
    }
}
