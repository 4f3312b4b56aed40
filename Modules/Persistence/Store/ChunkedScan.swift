/// A bounded batch of entries read from a store in one short read; the unit of ``ChunkedScan``.
///
/// Backends fill a chunk with ``append(key:value:)`` until it reports full, so every backend
/// reads the same amount per lock hold.
public struct ScanChunk: Sendable {
    /// At most this many entries are read per chunk.
    public static let maxEntries = 128
    /// A chunk is full once its keys and values reach about this many bytes.
    public static let maxBytes = 1 << 20

    /// The entries, in scan order.
    public private(set) var entries: [(key: [UInt8], value: [UInt8])] = []
    /// Whether the range may hold further entries after the last one (the chunk filled up).
    public private(set) var hasMore = false
    private var bytes = 0

    /// An empty chunk.
    public init() {}

    /// Adds an entry; returns `false` once the chunk is full and the read should stop.
    public mutating func append(key: [UInt8], value: [UInt8]) -> Bool {
        entries.append((key, value))
        bytes += key.count + value.count
        hasMore = entries.count >= ScanChunk.maxEntries || bytes >= ScanChunk.maxBytes
        return !hasMore
    }
}

/// The scan loop the backends share: read a chunk under the store's lock, hand its entries to
/// the caller outside the lock (so the caller may call the store), then go on after the last key.
public enum ChunkedScan {
    /// Calls `body` with each entry of `range`, in key order (descending when `reverse`), until it
    /// returns `false`, reading through `readChunk` one ``ScanChunk`` at a time.
    ///
    /// A write made during the scan may be seen by the chunks still to come.
    public static func run(
        _ range: KeyRange, reverse: Bool,
        readChunk: (KeyRange) throws -> ScanChunk,
        _ body: ([UInt8], [UInt8]) throws -> Bool
    ) throws {
        var remaining = range
        while true {
            let chunk = try readChunk(remaining)
            for entry in chunk.entries where !(try body(entry.key, entry.value)) { return }
            guard chunk.hasMore, let last = chunk.entries.last else { return }
            if reverse { remaining.upperBound = last.key } else { remaining.lowerBound = last.key + [0] }
        }
    }
}
