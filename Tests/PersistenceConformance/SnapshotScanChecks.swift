import Foundation
import Persistence

/// ``OrderedKeyValueStore/scanSnapshot(_:_:)``: one moment for the whole scan, however many
/// chunks it takes and whatever is written meanwhile, and an end when the store closes.
struct SnapshotScanChecks {
    let suite: Conformance
    init(_ suite: Conformance) { self.suite = suite }

    /// Many chunks' worth of keys (a chunk is at most ``ScanChunk/maxEntries``).
    private static let count = ScanChunk.maxEntries * 5 + 7

    private static func key(_ index: Int) -> [UInt8] { Array(String(format: "k%05d", index).utf8) }

    func oneMoment() throws {
        let directory = suite.freshDirectory()
        defer { suite.remove(directory) }
        let store = try suite.openStore(directory)
        defer { try? store.close() }
        var initial = WriteBatch()
        for index in 0..<Self.count { initial.put(Self.key(index), Array("old".utf8)) }
        try store.write(initial, durable: false)

        // Writes land while the scan runs (from its body, between its chunks): every key changed,
        // a key past the scan's place removed, new keys before and after it.
        var seen: [([UInt8], [UInt8])] = []
        try store.scanSnapshot(.all) { key, value in
            if seen.isEmpty || seen.count == ScanChunk.maxEntries * 2 {
                var change = WriteBatch()
                for index in 0..<Self.count { change.put(Self.key(index), Array("new-\(seen.count)".utf8)) }
                change.delete(Self.key(Self.count - 1))
                change.put(Array("a-before".utf8), [1])
                change.put(Array("z-after-\(seen.count)".utf8), [1])
                try store.write(change, durable: true)
            }
            seen.append((key, value))
            return true
        }
        try require(seen.count == Self.count, "the snapshot scan saw \(seen.count) entries, not the \(Self.count) stored when it began")
        for (index, entry) in seen.enumerated() {
            try require(entry.0 == Self.key(index), "entry \(index) of the snapshot scan is \(String(decoding: entry.0, as: UTF8.self))")
            try require(entry.1 == Array("old".utf8), "the snapshot scan saw a write made after it began at entry \(index)")
        }
        var now: [[UInt8]: [UInt8]] = [:]
        try store.scan(.all, reverse: false) { key, value in
            now[key] = value
            return true
        }
        try require(now[Self.key(0)] == Array("new-\(ScanChunk.maxEntries * 2)".utf8) && now[Self.key(Self.count - 1)] == nil
                        && now[Array("a-before".utf8)] != nil, "the writes made during the snapshot scan are missing afterwards")

        // A bounded range, and a body that stops early.
        var bounded: [[UInt8]] = []
        try store.scanSnapshot(KeyRange(from: Self.key(10), to: Self.key(20))) { key, _ in
            bounded.append(key)
            return bounded.count < 5
        }
        try require(bounded == (10..<15).map(Self.key), "a bounded snapshot scan that stops after 5 entries gave \(bounded.count)")

        // Closing the store ends a scan in progress at its next chunk.
        var read = 0
        do {
            try store.scanSnapshot(.all) { _, _ in
                read += 1
                if read == 1 { try store.close() }
                return true
            }
            throw ConformanceFailure("a snapshot scan went on to its end (\(read) entries) after the store closed")
        } catch let error as StorageError {
            guard case .closed = error.code else { throw ConformanceFailure("a snapshot scan of a closed store failed with \(error), not closed") }
        }
        try require(read <= ScanChunk.maxEntries, "a snapshot scan read \(read) entries after the store closed, more than the chunk in hand")
    }
}
