package import Logging
import Persistence

/// Damage: the background check of the store, marking the namespace damaged, and refusing
/// operations once it is.
extension NamespaceDatabase {
    /// Throws ``ServerError/damagedNamespace(_:cause:)`` once the namespace is marked damaged.
    nonisolated func refuseIfDamaged() throws(ServerError) {
        if let damage = health.damage { throw damage }
    }

    /// Marks the namespace damaged because of `cause` (the storage error naming the damage),
    /// found by `finder`; the first time, logs the cause and counts it in the metrics.
    ///
    /// - Returns: The error operations get from now on.
    @discardableResult
    nonisolated func markDamaged(_ cause: any Error, foundBy finder: String) -> ServerError {
        let error = ServerError.damagedNamespace(name, cause: cause)
        if health.markDamaged(error) {
            Logger(label: "rtdb.namespace").error(
                "namespace store is damaged: every operation on the namespace is refused until it is repaired (rtdb-server check, --repair)",
                metadata: ["namespace": "\(name)", "found-by": "\(finder)", "error": "\(cause)"])
            metrics?.namespaceDamaged()
        }
        return health.damage ?? error
    }

    /// The error an operation gets for a failed store call: the namespace's damage error when
    /// the store found damage (the namespace is marked damaged then), else `otherwise`.
    nonisolated func storeFailure(_ error: any Error, foundBy finder: String, otherwise: () -> ServerError) -> ServerError {
        ServerError.isDamage(error) ? markDamaged(error, foundBy: finder) : otherwise()
    }

    /// Checks `store` as a whole in the background (its backend's file check and every row's
    /// checksum, on a thread of its own at background priority), while the namespace serves
    /// requests. Damage found marks the namespace damaged. Await the end with
    /// ``NamespaceHealth/backgroundCheckResult()``.
    package nonisolated func startBackgroundCheck(of store: EmbeddedServerStore, logger: Logger) {
        let check = Task.detached(priority: .background) { [self] () -> StoreCheckResult in
            let result: StoreCheckResult
            do {
                let report = try await store.check()
                let metadata: Logger.Metadata = [
                    "namespace": "\(name)", "rows": "\(report.rows)", "bytes": "\(report.bytes)",
                    "seconds": "\(report.seconds)", "file-check": "\(report.fileCheck)",
                ]
                if let first = report.damage.first {
                    markDamaged(first, foundBy: "background check")
                    var details = metadata
                    details["damage"] = "\(report.damage.map(\.description).joined(separator: " | "))"
                    details["damaged-rows"] = "\(report.damagedRows)"
                    logger.error("background check found the namespace store damaged", metadata: details)
                    result = .damaged
                } else {
                    logger.info("background check of the namespace store found no damage", metadata: metadata)
                    result = .ok
                }
            } catch {
                logger.notice("background check of the namespace store did not finish",
                              metadata: ["namespace": "\(name)", "error": "\(error)"])
                result = .unfinished
            }
            metrics?.storeChecked(result)
            return result
        }
        health.started(check)
    }
}
