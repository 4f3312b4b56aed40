/// A whole-store check: the backend's own check of its files (``FileCheckingStore``), then a
/// walk of every row verifying its checksum. It finds damage no read has touched yet.
///
/// It runs beside the store's other users: the row walk reads in chunks (``ChunkedScan``), and
/// the file checks of the backends read beside the store's handle. Everything runs on the
/// calling thread: call it from a thread of its own.
public enum StoreCheck {
    /// What a check found.
    public struct Report: Sendable {
        /// What the backend's file check did (`"integrity_check: ok"`), or that it has none.
        public var fileCheck: String
        /// Rows read and verified.
        public var rows: Int
        /// Bytes of the rows (keys and stored values) read.
        public var bytes: Int
        /// How long the check took.
        public var seconds: Double
        /// The damage found, the first ``maxDamageListed`` of it: empty for a sound store.
        public var damage: [StorageError]
        /// Rows whose checksum did not match, counted past ``maxDamageListed``.
        public var damagedRows: Int

        /// Whether the check found no damage.
        public var isSound: Bool { damage.isEmpty }

        /// A report of what a check read and found.
        public init(fileCheck: String, rows: Int = 0, bytes: Int = 0, seconds: Double = 0, damage: [StorageError] = [], damagedRows: Int = 0) {
            self.fileCheck = fileCheck
            self.rows = rows
            self.bytes = bytes
            self.seconds = seconds
            self.damage = damage
            self.damagedRows = damagedRows
        }
    }

    /// The most damaged places a report lists.
    public static let maxDamageListed = 10

    /// Checks `store`: its backend's files, then every row's checksum.
    ///
    /// - Parameter shouldStop: asked between chunks of rows; `true` ends the check early with
    ///   ``StorageError/Code-swift.enum/closed``.
    /// - Returns: The report; damage is in ``Report/damage``, not thrown.
    /// - Throws: ``StorageError`` other than damage: the store was closed, an I/O error.
    public static func run(_ store: ChecksummedStore, shouldStop: () -> Bool = { false }) throws -> Report {
        let started = ContinuousClock.now
        var report = Report(fileCheck: "none (the backend has no file check)")
        func finish() -> Report {
            report.seconds = (ContinuousClock.now - started) / .seconds(1)
            return report
        }
        if let checking = store.base as? any FileCheckingStore {
            do {
                report.fileCheck = try checking.checkFiles()
            } catch let error as StorageError where error.code == .corrupt {
                // A damaged structure can make the row walk read garbage: report the damage alone.
                report.fileCheck = "damaged"
                report.damage.append(error)
                return finish()
            }
        }
        var rowsSinceStopCheck = 0
        do {
            try store.base.scan(.all, reverse: false) { key, sealed in
                report.rows += 1
                report.bytes += key.count + sealed.count
                if !store.isUnsealed(key) {
                    do {
                        _ = try ChecksummedStore.open(key: key, sealed: sealed)
                    } catch let error as StorageError {
                        report.damagedRows += 1
                        if report.damage.count < maxDamageListed { report.damage.append(error) }
                    }
                }
                rowsSinceStopCheck += 1
                if rowsSinceStopCheck >= ScanChunk.maxEntries {
                    rowsSinceStopCheck = 0
                    if shouldStop() { throw StorageError(.closed, "the check was stopped before it read every row") }
                }
                return true
            }
        } catch let error as StorageError where error.code == .corrupt {
            // The engine itself found damage while reading (a damaged page): the walk ends there.
            report.damage.append(error)
        }
        return finish()
    }
}
