/// The one protocol a storage backend implements: an ordered byte-key store with atomic batches.
///
/// Keys compare as unsigned bytes, lexicographically (a shorter key sorts before any key it is a
/// prefix of). Everything above this protocol (the server cache, the write queue, tracked queries,
/// size accounting, eviction) is written once in ``StorageEngine``, so every backend behaves the
/// same. Calls may come from any thread; an implementation serialises them itself.
///
/// Keys are at least one byte (LMDB cannot store an empty key; the engine never writes one).
public protocol OrderedKeyValueStore: AnyObject, Sendable {
    /// The value stored under `key`, or `nil`.
    func get(_ key: [UInt8]) throws -> [UInt8]?

    /// Calls `body` with each entry whose key lies in `range`, in key order (descending when
    /// `reverse`), until `body` returns `false`. The store is not modified during the scan.
    func scan(_ range: KeyRange, reverse: Bool, _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool) throws

    /// Calls `body` with each entry whose key lies in `range`, in ascending key order, as the
    /// store held them at one moment (when the scan began), until `body` returns `false`.
    ///
    /// Unlike ``scan(_:reverse:_:)``, whose chunks may see writes made meanwhile, the whole scan
    /// reads one snapshot (SQLite: one read transaction on a connection of its own; LMDB: one
    /// read-only transaction; LevelDB: a snapshot). Writes made during it, from any thread or from
    /// `body`, go ahead and are not seen. `body` runs without the store's lock held. A snapshot
    /// costs the store while it lasts (SQLite's WAL and LMDB's file cannot reuse the pages it
    /// still shows; LevelDB keeps overwritten entries), so it is meant for one long read, an
    /// export. Closing the store ends it: the scan's next chunk throws
    /// ``StorageError/Code-swift.enum/closed``.
    func scanSnapshot(_ range: KeyRange, _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool) throws

    /// Applies every operation of `batch` atomically: after a crash either all of them are visible
    /// or none. With `durable`, the batch is on stable storage (synced) when the call returns;
    /// without, it survives the process being killed but may be lost by an OS crash.
    func write(_ batch: WriteBatch, durable: Bool) throws

    /// Flushes (syncs) and releases the store. Later calls, even an empty write, throw
    /// ``StorageError/Code-swift.enum/closed``; closing twice is harmless.
    func close() throws
}

/// A half-open range of keys, `[lowerBound, upperBound)`; a `nil` upper bound means no end.
public struct KeyRange: Sendable, Hashable {
    /// The first key in the range.
    public var lowerBound: [UInt8]
    /// The first key after the range, or `nil` for every key from `lowerBound` on.
    public var upperBound: [UInt8]?

    /// The keys from `lowerBound` (inclusive) to `upperBound` (exclusive).
    public init(from lowerBound: [UInt8], to upperBound: [UInt8]?) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// Every key that starts with `prefix`.
    public init(prefix: [UInt8]) {
        lowerBound = prefix
        upperBound = KeyRange.successor(ofPrefix: prefix)
    }

    /// Every key.
    public static let all = KeyRange(from: [], to: nil)

    /// Whether `key` lies in the range.
    public func contains(_ key: [UInt8]) -> Bool {
        guard !key.lexicographicallyPrecedes(lowerBound) else { return false }
        guard let upperBound else { return true }
        return key.lexicographicallyPrecedes(upperBound)
    }

    /// The smallest key greater than every key starting with `prefix` (`nil` when the prefix is all 0xFF).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }
}

/// Operations applied together by ``OrderedKeyValueStore/write(_:durable:)``, in order.
public struct WriteBatch: Sendable {
    /// One operation.
    public enum Operation: Sendable, Equatable {
        /// Stores `value` under `key`, replacing any value there.
        case put(key: [UInt8], value: [UInt8])
        /// Removes `key` if present.
        case delete(key: [UInt8])
        /// Removes every key in the range.
        case deleteRange(KeyRange)
    }

    /// The operations, applied in order.
    public private(set) var operations: [Operation] = []

    /// An empty batch.
    public init() {}

    /// Whether the batch holds no operation.
    public var isEmpty: Bool { operations.isEmpty }

    /// Adds a put.
    public mutating func put(_ key: [UInt8], _ value: [UInt8]) { operations.append(.put(key: key, value: value)) }
    /// Adds a delete.
    public mutating func delete(_ key: [UInt8]) { operations.append(.delete(key: key)) }
    /// Adds a range delete.
    public mutating func deleteRange(_ range: KeyRange) { operations.append(.deleteRange(range)) }
    /// Adds every operation of `other` after these.
    public mutating func append(contentsOf other: WriteBatch) { operations += other.operations }

    /// Makes room for `count` operations, so a large batch is not copied as it grows.
    public mutating func reserveCapacity(_ count: Int) { operations.reserveCapacity(count) }

    /// Removes every operation, keeping the room they took when `keepingCapacity`: a bulk writer
    /// fills the same batch again instead of allocating (and later freeing) a new large one.
    public mutating func removeAll(keepingCapacity: Bool = false) { operations.removeAll(keepingCapacity: keepingCapacity) }
}
