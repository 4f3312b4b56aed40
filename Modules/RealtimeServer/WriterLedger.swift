import SyncProtocol

/// What a namespace remembers of each client's stamped writes, so each is applied at most once
/// (see ``SyncProtocol/WriteStamp``).
///
/// Per client it keeps the sequence numbers it applied that the client may still send again
/// (those at or above the client's floor), and when it last applied one. A record is stored as
/// the setting `writers/<client>`, in the same commit as the write that changed it; a record
/// untouched for ``retention`` is dropped (a client that comes back after that time and re-sends
/// a write it had made before could have it applied twice).
struct WriterLedger {
    /// One client's record.
    struct Record: Equatable {
        /// Applied sequence numbers at or above the client's last floor, ascending.
        var applied: [Int64]
        /// When the last of them was applied (server milliseconds).
        var lastApplied: Int64
    }

    /// The setting name prefix of the records.
    static let settingPrefix = "writers/"

    private(set) var records: [String: Record] = [:]
    /// How long a record is kept after its last applied write, in milliseconds.
    let retention: Int64
    /// The most records kept; past it the least recently applied go first.
    let maxRecords: Int
    /// When expired records were last looked for.
    private var lastSweep: Int64 = 0

    init(retention: Int64, maxRecords: Int = 100_000) {
        self.retention = retention
        self.maxRecords = maxRecords
    }

    /// Forgets what `stamp`'s client settled (below its floor) and says whether `stamp` was
    /// applied already.
    mutating func isDuplicate(_ stamp: WriteStamp) -> Bool {
        guard var record = records[stamp.client] else { return false }
        if let first = record.applied.first, first < stamp.floor {
            record.applied.removeAll { $0 < stamp.floor }
            records[stamp.client] = record
        }
        return record.applied.contains(stamp.sequence)
    }

    /// Notes that `stamp` was applied at `now`; returns the setting that stores the record.
    mutating func noteApplied(_ stamp: WriteStamp, now: Int64) -> StoreSetting {
        var record = records[stamp.client] ?? Record(applied: [], lastApplied: now)
        record.applied.removeAll { $0 < stamp.floor }
        let index = record.applied.firstIndex { $0 > stamp.sequence } ?? record.applied.endIndex
        record.applied.insert(stamp.sequence, at: index)
        record.lastApplied = max(record.lastApplied, now)
        records[stamp.client] = record
        return WriterLedger.setting(client: stamp.client, record)
    }

    /// Takes back `stamp` (its write failed to commit after being applied in memory).
    mutating func forget(_ stamp: WriteStamp) {
        records[stamp.client]?.applied.removeAll { $0 == stamp.sequence }
    }

    /// Drops records past their retention (or past ``maxRecords``) at most once an hour; returns
    /// the settings that remove them from the store.
    mutating func sweep(now: Int64, force: Bool = false) -> [StoreSetting] {
        guard force || now - lastSweep >= 3_600_000 else { return [] }
        lastSweep = now
        var expired = records.filter { now - $0.value.lastApplied > retention }.map(\.key)
        if records.count - expired.count > maxRecords {
            let kept = records.filter { now - $0.value.lastApplied <= retention }
            expired += kept.sorted { $0.value.lastApplied < $1.value.lastApplied }.prefix(kept.count - maxRecords).map(\.key)
        }
        for client in expired { records[client] = nil }
        return expired.map { StoreSetting(name: WriterLedger.settingPrefix + $0, value: []) }
    }

    /// Adopts a stored record (at open, or committed by another node); an empty value removes it.
    mutating func adopt(_ setting: StoreSetting) {
        guard setting.name.hasPrefix(WriterLedger.settingPrefix) else { return }
        let client = String(setting.name.dropFirst(WriterLedger.settingPrefix.count))
        records[client] = WriterLedger.decode(setting.value)
    }

    /// Replaces every record with the stored ones.
    mutating func reload(_ settings: [StoreSetting]) {
        records = [:]
        for setting in settings { adopt(setting) }
    }

    // Stored form: `<lastApplied> <seq> <seq> ...` in decimal ASCII.

    static func setting(client: String, _ record: Record) -> StoreSetting {
        let text = ([record.lastApplied] + record.applied).map(String.init).joined(separator: " ")
        return StoreSetting(name: settingPrefix + client, value: Array(text.utf8))
    }

    static func decode(_ bytes: [UInt8]) -> Record? {
        let numbers = String(decoding: bytes, as: UTF8.self).split(separator: " ").compactMap { Int64($0) }
        guard let lastApplied = numbers.first else { return nil }
        return Record(applied: Array(numbers.dropFirst()).sorted(), lastApplied: lastApplied)
    }
}
