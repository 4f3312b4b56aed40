public import CoreTree
import Dispatch
import Foundation
import Synchronization
public import Persistence

/// The embedded default ``ServerStore``: the namespace's tree as rows in the layout of
/// ``Persistence/StorageEngine``'s cache (checksummed, a subtree one key range), over any
/// ``Persistence/OrderedKeyValueStore`` backend (SQLite, LMDB, LevelDB or memory), one directory
/// per namespace. Settings (the rules, the writer ledger) are rows beside the tree.
///
/// The store owns its commit thread: every call runs there, in the order made, and the caller
/// awaits it without blocking (an fsync holds only this store's thread).
///
/// A commit costs the size of its writes: each replaces its path's key range (see
/// ``Persistence/StorageEngine/addWrites(_:reading:to:sealed:)``); only a removal reads, to find the
/// ancestors it left empty. Reads are range scans; a shallow read seeks from child to child.
public final class EmbeddedServerStore: ServerStore {
    private let rows: ChecksummedStore
    private let thread = DispatchQueue(label: "rtdb.store")
    /// The version of the last commit, set and read on the store's thread only (a read sees
    /// exactly the commits made before it, so its version is theirs).
    private let version = Mutex<UInt64>(0)

    /// Opens the store over `store`, on the calling thread (it checks the store's format): for
    /// callers on threads of their own. Async code uses ``open(_:directory:)``.
    ///
    /// - Throws: ``Persistence/StorageError`` when the store is of a newer format or damaged.
    public init(store: any OrderedKeyValueStore) throws {
        rows = try StorageEngine.openSealed(store)
    }

    /// Opens (creating it when new) the store of `backend` in `directory`, on a thread of its own.
    public static func open(_ backend: StorageBackend, directory: String) async throws -> EmbeddedServerStore {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "rtdb.store.open").async {
                continuation.resume(with: Result {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    return try EmbeddedServerStore(store: try backend.open(directory))
                })
            }
        }
    }

    /// Runs `work` on the store's thread and hands back its result.
    private func onThread<T: Sendable>(_ work: @escaping @Sendable (ChecksummedStore) throws -> T) async throws -> T {
        let rows = self.rows
        return try await withCheckedThrowingContinuation { continuation in
            thread.async { continuation.resume(with: Result { try work(rows) }) }
        }
    }

    public func read(at path: TreePath, limit: Int) async throws -> StoredData {
        try await onThread { [self] rows in
            guard let node = try StorageEngine.readTree(at: path, from: rows, limit: limit) else { throw ServerError.readTooLarge }
            return StoredData(node: node, version: version.withLock { $0 })
        }
    }

    public func readShallow(at path: TreePath, limit: Int) async throws -> StoredShallowData {
        try await onThread { rows in
            guard let found = try StorageEngine.readShallow(at: path, from: rows, limit: limit) else { throw ServerError.readTooLarge }
            return StoredShallowData(leaf: found.leaf, children: found.children)
        }
    }

    public func commit(_ change: StoreChange) async throws {
        // The rows are made on the store's thread too, not on the caller's executor: a group of
        // a thousand writes is a thousand subtrees to encode, work the cooperative pool (parsing
        // and deciding the next writes meanwhile) should not carry.
        // The rows are made with their checksums (no copy of each value to seal it afterwards),
        // those of a large group on two threads.
        try await onThread { [self] rows in
            var batch = EmbeddedServerStore.batch(saving: change.settings, sealed: true)
            try StorageEngine.addWrites(change.writes.map { ($0.path, $0.node) }, reading: rows, to: &batch, sealed: true)
            if !batch.isEmpty { try rows.writeSealed(batch, durable: true) }
            version.withLock { $0 = change.version }
        }
    }

    /// The rows are read by a snapshot scan (``Persistence/OrderedKeyValueStore/scanSnapshot(_:_:)``)
    /// on a thread of its own, not the store's: commits go on meanwhile. The thread hands its
    /// pieces to `write` through a pipe of four, and blocks while it is full.
    public func exportSnapshot(_ write: ([UInt8]) async throws -> Void) async throws {
        let pipe = ExportChunkPipe(capacity: 4)
        let rows = self.rows
        let thread = Thread {
            do {
                let output = ExportOutput(chunkBytes: EmbeddedServerStore.exportChunkBytes) { chunk throws(ServerError) in try pipe.push(chunk) }
                var writer = ExportJSONWriter(output: output)
                try rows.scanSnapshot(StorageEngine.cacheRange(at: .root)) { key, value in
                    try writer.add(key: key, value: value)
                    return true
                }
                try writer.finish()
                pipe.finish(nil)
            } catch {
                pipe.finish(error)
            }
        }
        thread.name = "rtdb-export"
        thread.start()
        do {
            while let chunk = try await pipe.next() { try await write(chunk) }
        } catch {
            pipe.cancel()
            throw error
        }
    }

    /// The size of an export's pieces.
    static let exportChunkBytes = 256 << 10

    public func setting(named name: String) async throws -> [UInt8]? {
        try await onThread { try $0.get(StorageKeys.settingKey(name)) }
    }

    public func settings(withPrefix prefix: String) async throws -> [StoreSetting] {
        try await onThread { rows in
            var found: [StoreSetting] = []
            try rows.scan(KeyRange(prefix: StorageKeys.settingKey(prefix)), reverse: false) { key, value in
                found.append(StoreSetting(name: String(decoding: key.dropFirst(StorageKeys.settingPrefix.count), as: UTF8.self), value: value))
                return true
            }
            return found
        }
    }

    public func saveSetting(named name: String, _ value: [UInt8]) async throws {
        let batch = EmbeddedServerStore.batch(saving: [StoreSetting(name: name, value: value)])
        try await onThread { try $0.write(batch, durable: true) }
    }

    public func close() async throws { try await onThread { try $0.close() } }

    /// Checks the whole store, its backend's files and every row's checksum (``StoreCheck``), on
    /// a thread of its own at background priority, not on the store's thread: reads and commits
    /// go on meanwhile. Closing the store ends the check early (it then throws).
    ///
    /// - Returns: The report; damage is listed in it, not thrown.
    /// - Throws: ``Persistence/StorageError`` when the check could not finish (the store closed,
    ///   an I/O error).
    public func check() async throws -> StoreCheck.Report {
        let rows = self.rows
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try StoreCheck.run(rows) }) }
            thread.name = "rtdb.store.check"
            thread.qualityOfService = .background
            thread.start()
        }
    }

    /// The batch that saves `settings` (an empty value removes one).
    static func batch(saving settings: [StoreSetting], sealed: Bool = false) -> WriteBatch {
        var batch = WriteBatch()
        for setting in settings {
            let key = StorageKeys.settingKey(setting.name)
            if setting.value.isEmpty {
                batch.delete(key)
            } else {
                batch.put(key, sealed ? ChecksummedStore.seal(key: key, value: setting.value) : setting.value)
            }
        }
        return batch
    }
}
