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
        /// Applied sequence numbers at or above the client's last floor, as ascending disjoint
        /// ranges: a queue's writes arrive in order, so a backlog of any length is one range and
        /// each write costs O(1) to note and to store.
        var applied: [ClosedRange<Int64>]
        /// When the last of them was applied (server milliseconds).
        var lastApplied: Int64

        func contains(_ sequence: Int64) -> Bool {
            // Ranges are few: the queue's run, plus one per transaction settled out of order.
            applied.contains { $0.contains(sequence) }
        }

        /// Drops what lies below `floor`.
        mutating func trim(below floor: Int64) {
            while let first = applied.first, first.lowerBound < floor {
                if first.upperBound < floor {
                    applied.removeFirst()
                } else {
                    applied[0] = floor...first.upperBound
                }
            }
        }

        /// Adds `sequence`, joining it to its neighbours.
        mutating func insert(_ sequence: Int64) {
            if let last = applied.last, last.upperBound + 1 == sequence {
                applied[applied.count - 1] = last.lowerBound...sequence
                return
            }
            applied = WriterLedger.merging(applied, sequence...sequence)
        }
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
        guard records[stamp.client] != nil else { return false }
        records[stamp.client]!.trim(below: stamp.floor)
        return records[stamp.client]!.contains(stamp.sequence)
    }

    /// Notes that `stamp` was applied at `now`; returns the setting that stores the record.
    mutating func noteApplied(_ stamp: WriteStamp, now: Int64) -> StoreSetting {
        var record = records.removeValue(forKey: stamp.client) ?? Record(applied: [], lastApplied: now)
        record.trim(below: stamp.floor)
        record.insert(stamp.sequence)
        record.lastApplied = max(record.lastApplied, now)
        records[stamp.client] = record
        return WriterLedger.setting(client: stamp.client, record)
    }

    /// Takes back `stamp` (its write failed to commit after being applied in memory).
    mutating func forget(_ stamp: WriteStamp) {
        guard var record = records.removeValue(forKey: stamp.client) else { return }
        var ranges: [ClosedRange<Int64>] = []
        for range in record.applied {
            guard range.contains(stamp.sequence) else {
                ranges.append(range)
                continue
            }
            if range.lowerBound < stamp.sequence { ranges.append(range.lowerBound...(stamp.sequence - 1)) }
            if stamp.sequence < range.upperBound { ranges.append((stamp.sequence + 1)...range.upperBound) }
        }
        record.applied = ranges
        records[stamp.client] = record
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

    // Stored form: `<lastApplied>` then ` <low>-<high>` per range (` <n>` for one number), in
    // decimal ASCII.

    static func setting(client: String, _ record: Record) -> StoreSetting {
        var text = String(record.lastApplied)
        for range in record.applied {
            text += range.lowerBound == range.upperBound ? " \(range.lowerBound)" : " \(range.lowerBound)-\(range.upperBound)"
        }
        return StoreSetting(name: settingPrefix + client, value: Array(text.utf8))
    }

    static func decode(_ bytes: [UInt8]) -> Record? {
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard let first = fields.first, let lastApplied = Int64(first) else { return nil }
        var record = Record(applied: [], lastApplied: lastApplied)
        for field in fields.dropFirst() {
            let bounds = field.split(separator: "-").compactMap { Int64($0) }
            guard let low = bounds.first, let high = bounds.last, low <= high else { continue }
            record.applied = WriterLedger.merging(record.applied, low...high)
        }
        return record
    }

    /// `ranges` with `range` added, merged into ascending disjoint ranges.
    private static func merging(_ ranges: [ClosedRange<Int64>], _ range: ClosedRange<Int64>) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        var pending = range
        var placed = false
        for current in ranges {
            if current.upperBound + 1 < pending.lowerBound {
                result.append(current)
            } else if pending.upperBound + 1 < current.lowerBound {
                if !placed { result.append(pending); placed = true }
                result.append(current)
            } else {
                pending = min(current.lowerBound, pending.lowerBound)...max(current.upperBound, pending.upperBound)
            }
        }
        if !placed { result.append(pending) }
        return result
    }
}
