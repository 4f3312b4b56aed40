import CoreTree
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An in-memory ``OrderedKeyValueStore``: fast, and gone when the process ends.
///
/// Stores opened on the same directory name within one process share their data, so closing and
/// reopening behaves as it does on disk. `durable` has no meaning here.
public final class MemoryStore: OrderedKeyValueStore {
    /// Entries sorted by key.
    // @unchecked: `isOpen` is only touched under `shared`'s lock and `entries` under the `state`
    // lock of the one store that has it open, two locks the compiler cannot relate to this class.
    final class Contents: @unchecked Sendable {
        /// A persistent sorted map: a put or delete anywhere is O(log n) (a sorted array moved
        /// every later entry, which made draining a long queue from its front quadratic).
        var entries = SortedMap<StoreKey, [UInt8]>()
        var isOpen = false
    }

    /// A key ordered byte by byte, as the disk backends order theirs.
    struct StoreKey: ThreeWayComparable {
        let bytes: [UInt8]

        static func compare(_ lhs: StoreKey, _ rhs: StoreKey) -> Int {
            lhs.bytes.withUnsafeBufferPointer { left in
                rhs.bytes.withUnsafeBufferPointer { right in
                    let common = min(left.count, right.count)
                    if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                        let order = memcmp(a, b, common)
                        if order != 0 { return order < 0 ? -1 : 1 }
                    }
                    return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
                }
            }
        }

        static func < (lhs: StoreKey, rhs: StoreKey) -> Bool { compare(lhs, rhs) < 0 }
        static func == (lhs: StoreKey, rhs: StoreKey) -> Bool { lhs.bytes == rhs.bytes }
    }

    private static let shared = Mutex<[String: Contents]>([:])

    private let state: Mutex<Contents?>
    private let name: String?

    /// A private store that no other instance sees.
    public init() {
        let contents = Contents()
        contents.isOpen = true
        state = Mutex(contents)
        name = nil
    }

    /// The store for `directory` in this process, as left by the last instance that closed it.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/inUse(pid:)`` when another instance has it open.
    public init(directory: String) throws {
        let contents = try MemoryStore.shared.withLock { stores -> Contents in
            let contents = stores[directory] ?? Contents()
            if contents.isOpen {
                throw StorageError(.inUse(pid: nil), "the in-memory store '\(directory)' is already open in this process", backend: "memory")
            }
            contents.isOpen = true
            stores[directory] = contents
            return contents
        }
        state = Mutex(contents)
        name = directory
    }

    private func withContents<T>(_ body: (Contents) throws -> T) throws -> T {
        try state.withLock { contents in
            guard let contents else { throw StorageError(.closed, "the store is closed", backend: "memory") }
            return try body(contents)
        }
    }

    /// The position of the first key not less than `key`.
    /// The entries from `range`'s lower bound up to (not including) its upper bound.
    private static func entries(in range: KeyRange, of contents: Contents) -> [(key: StoreKey, value: [UInt8])] {
        let upper = range.upperBound.map(StoreKey.init(bytes:))
        var result: [(key: StoreKey, value: [UInt8])] = []
        for entry in contents.entries.elements(from: StoreKey(bytes: range.lowerBound)) {
            if let upper, StoreKey.compare(entry.key, upper) >= 0 { break }
            result.append(entry)
        }
        return result
    }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try withContents { contents in contents.entries[StoreKey(bytes: key)] }
    }

    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        // Copy the range first so `body` may not observe (or deadlock on) later writes.
        let entries = try withContents { contents in MemoryStore.entries(in: range, of: contents) }
        for entry in reverse ? entries.reversed() : entries where !(try body(entry.key.bytes, entry.value)) { return }
    }

    /// The map is persistent: taking it is the snapshot (O(1)); a later write copies only the
    /// nodes on its path.
    public func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        let snapshot = try withContents { $0.entries }
        let upper = range.upperBound.map(StoreKey.init(bytes:))
        var count = 0
        for entry in snapshot.elements(from: StoreKey(bytes: range.lowerBound)) {
            if let upper, StoreKey.compare(entry.key, upper) >= 0 { return }
            // A closed store ends the scan, as on disk (where the snapshot goes with it).
            count += 1
            if count % ScanChunk.maxEntries == 0 { try withContents { _ in } }
            guard try body(entry.key.bytes, entry.value) else { return }
        }
    }

    public func write(_ batch: WriteBatch, durable: Bool) throws {
        try withContents { contents in
            for operation in batch.operations {
                switch operation {
                case .put(let key, let value):
                    contents.entries.insert(StoreKey(bytes: key), value)
                case .delete(let key):
                    contents.entries.remove(StoreKey(bytes: key))
                case .deleteRange(let range):
                    for entry in MemoryStore.entries(in: range, of: contents) { contents.entries.remove(entry.key) }
                }
            }
        }
    }

    public func close() throws {
        let contents = state.withLock { contents -> Contents? in
            defer { contents = nil }
            return contents
        }
        guard let contents else { return }
        if name != nil { MemoryStore.shared.withLock { _ in contents.isOpen = false } }
    }
}
