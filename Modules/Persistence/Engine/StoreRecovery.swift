import Foundation

/// Opening a store that may be damaged: a store that cannot be opened or read is moved aside and
/// replaced by a fresh one, keeping every queued user write that could still be read.
public enum StoreRecovery {
    /// What recovery did.
    public struct Report: Sendable {
        /// Where the damaged store was moved.
        public var movedTo: String
        /// Why it was moved.
        public var cause: StorageError
        /// How many queued writes were carried over to the fresh store.
        public var keptWrites: Int
    }

    /// Opens `backend` in `directory` as a ``StorageEngine``, after the backend's whole-file check
    /// (``FileCheckingStore/checkFiles()``). When the store is corrupt or a record in it cannot be read, moves the directory aside (`<directory>.corrupt-<time>`), starts a
    /// fresh store there and re-queues the writes that were readable.
    ///
    /// Errors that recovery cannot help (the store is in use, a newer format, I/O errors) are thrown.
    public static func open(_ backend: StorageBackend, directory: String) throws -> (engine: StorageEngine, report: Report?) {
        var salvaged: [UserWriteRecord] = []
        let cause: StorageError
        do {
            let store = try backend.open(directory)
            do {
                // Opening a store checks no more than its headers; a local cache is small, so its
                // whole files are checked here (a damaged b-tree page can hide queued writes
                // without any read failing).
                if let checking = store as? any FileCheckingStore { _ = try checking.checkFiles() }
                let engine = try StorageEngine(store: store)
                // Every record must be readable now, not at some later read.
                _ = try engine.userWrites()
                _ = try engine.trackedQueries()
                return (engine, nil)
            } catch let error as StorageError where isDamage(error) {
                salvaged = salvageWrites(store)
                if !FileManager.default.fileExists(atPath: directory) {
                    // A store with no files (in memory): start it fresh in place.
                    var wipe = WriteBatch()
                    wipe.deleteRange(.all)
                    try store.write(wipe, durable: true)
                    try store.close()
                    let engine = try StorageEngine(store: try backend.open(directory))
                    for record in salvaged { try engine.appendUserWrite(record) }
                    return (engine, Report(movedTo: "(cleared in place)", cause: error, keptWrites: salvaged.count))
                }
                try? store.close()
                cause = error
            } catch {
                try? store.close()
                throw error
            }
        } catch let error as StorageError where isDamage(error) {
            cause = error
        }
        let movedTo = directory + ".corrupt-\(Int(Date().timeIntervalSince1970 * 1000))"
        do {
            try FileManager.default.moveItem(atPath: directory, toPath: movedTo)
        } catch {
            throw StorageError(
                .io,
                "the store in \(directory) is damaged (\(cause.summary)) and could not be moved aside to start a fresh one; check the permissions of its parent directory, or move it away by hand.",
                backend: backend.name, underlying: error)
        }
        let engine = try StorageEngine(store: try backend.open(directory))
        for record in salvaged { try engine.appendUserWrite(record) }
        return (engine, Report(movedTo: movedTo, cause: cause, keptWrites: salvaged.count))
    }

    private static func isDamage(_ error: StorageError) -> Bool {
        switch error.code {
        case .corrupt, .invalidRecord: return true
        default: return false
        }
    }

    /// The queued writes that can still be read, skipping unreadable ones: a row whose checksum
    /// holds, or (a store still in format 1) a row without one that decodes.
    private static func salvageWrites(_ store: any OrderedKeyValueStore) -> [UserWriteRecord] {
        var records: [UserWriteRecord] = []
        try? store.scan(KeyRange(prefix: StorageKeys.writePrefix), reverse: false) { key, sealed in
            guard let id = StorageKeys.readBigEndian(key.dropFirst()) else { return true }
            let value = (try? ChecksummedStore.open(key: key, sealed: sealed)) ?? sealed
            if let record = try? UserWriteRecord.decode(writeId: Int64(bitPattern: id), value) {
                records.append(record)
            }
            return true
        }
        return records
    }
}
