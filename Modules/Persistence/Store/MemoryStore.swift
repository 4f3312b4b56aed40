import Synchronization

/// An in-memory ``OrderedKeyValueStore``: fast, and gone when the process ends.
///
/// Stores opened on the same directory name within one process share their data, so closing and
/// reopening behaves as it does on disk. `durable` has no meaning here.
public final class MemoryStore: OrderedKeyValueStore {
    /// Entries sorted by key.
    final class Contents: @unchecked Sendable {
        var keys: [[UInt8]] = []
        var values: [[UInt8]] = []
        var isOpen = false
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
    private static func lowerBound(_ key: [UInt8], in keys: [[UInt8]]) -> Int {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].lexicographicallyPrecedes(key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        try withContents { contents in
            let position = MemoryStore.lowerBound(key, in: contents.keys)
            return position < contents.keys.count && contents.keys[position] == key ? contents.values[position] : nil
        }
    }

    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        // Copy the range first so `body` may not observe (or deadlock on) later writes.
        let entries: [([UInt8], [UInt8])] = try withContents { contents in
            let start = MemoryStore.lowerBound(range.lowerBound, in: contents.keys)
            let end = range.upperBound.map { MemoryStore.lowerBound($0, in: contents.keys) } ?? contents.keys.count
            guard start < end else { return [] }
            return Array(zip(contents.keys[start..<end], contents.values[start..<end]))
        }
        for (key, value) in reverse ? entries.reversed() : entries where !(try body(key, value)) { return }
    }

    public func write(_ batch: WriteBatch, durable: Bool) throws {
        try withContents { contents in
            for operation in batch.operations {
                switch operation {
                case .put(let key, let value):
                    let position = MemoryStore.lowerBound(key, in: contents.keys)
                    if position < contents.keys.count && contents.keys[position] == key {
                        contents.values[position] = value
                    } else {
                        contents.keys.insert(key, at: position)
                        contents.values.insert(value, at: position)
                    }
                case .delete(let key):
                    let position = MemoryStore.lowerBound(key, in: contents.keys)
                    if position < contents.keys.count && contents.keys[position] == key {
                        contents.keys.remove(at: position)
                        contents.values.remove(at: position)
                    }
                case .deleteRange(let range):
                    let start = MemoryStore.lowerBound(range.lowerBound, in: contents.keys)
                    let end = range.upperBound.map { MemoryStore.lowerBound($0, in: contents.keys) } ?? contents.keys.count
                    if start < end {
                        contents.keys.removeSubrange(start..<end)
                        contents.values.removeSubrange(start..<end)
                    }
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
