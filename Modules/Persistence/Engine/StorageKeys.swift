package import CoreTree

/// How the engine lays its records out in the store's one keyspace.
///
/// Every kind of record has its own first byte, so one batch can update the cache, the write
/// queue and the metadata together:
/// - `c/` + each path key followed by `/`: one row per leaf of the server cache (`c/` is the root),
///   so a subtree is one contiguous key range;
/// - a cache path key followed by `0x01`: an overflow row (see ``maxCacheKeyBytes``);
/// - `w` + 8-byte big-endian write id: one user write (byte order is queue order);
/// - `q` + 8-byte big-endian query id: one tracked query;
/// - `k` + query id + child key: a key a filtered query is known to hold;
/// - `m/…`: metadata (format version, cache size).
public enum StorageKeys {
    /// The longest cache key the engine writes: below LMDB's 511-byte limit with room to spare.
    ///
    /// A Firebase path may take 768 bytes, so leaves whose keys would be longer are stored
    /// together in one overflow row of their deepest ancestor whose key fits. Every backend
    /// stores the same rows, so they all accept the same paths.
    public static let maxCacheKeyBytes = 480

    static let cachePrefix: [UInt8] = [UInt8(ascii: "c"), UInt8(ascii: "/")]
    static let writePrefix: [UInt8] = [UInt8(ascii: "w")]
    static let queryPrefix: [UInt8] = [UInt8(ascii: "q")]
    static let trackedKeyPrefix: [UInt8] = [UInt8(ascii: "k")]
    static let formatVersion: [UInt8] = Array("m/version".utf8)
    package static let cacheSize: [UInt8] = Array("m/size".utf8)
    /// The highest write id ever queued (ids are never reused, also after the queue empties).
    static let lastWriteId: [UInt8] = Array("m/last-write".utf8)
    package static let settingPrefix: [UInt8] = Array("s/".utf8)
    package static let overflowMarker: UInt8 = 0x01
    package static let separator = UInt8(ascii: "/")

    /// The cache key of `path`: `c/` then each key and a `/`.
    package static func cacheKey(_ path: TreePath) -> [UInt8] {
        var bytes = cachePrefix
        for key in path.keys {
            bytes += key.stringValue.utf8
            bytes.append(separator)
        }
        return bytes
    }

    /// Whether `path`'s rows (its own and its overflow row) fit under ``maxCacheKeyBytes``.
    package static func fits(_ path: TreePath) -> Bool {
        cachePrefix.count + path.keys.reduce(0) { $0 + $1.stringValue.utf8.count + 1 } + 1 <= maxCacheKeyBytes
    }

    /// The deepest ancestor of `path` (or `path` itself) whose rows fit.
    package static func deepestFittingAncestor(_ path: TreePath) -> TreePath {
        var length = cachePrefix.count + 1
        var count = 0
        for key in path.keys {
            let next = length + key.stringValue.utf8.count + 1
            if next > maxCacheKeyBytes { break }
            length = next
            count += 1
        }
        return TreePath(keys: Array(path.keys.prefix(count)))
    }

    /// The overflow row of `path`, holding its descendants whose keys do not fit.
    package static func overflowKey(_ path: TreePath) -> [UInt8] { cacheKey(path) + [overflowMarker] }

    /// The path a cache key below `base` names relative to `base`, and whether it is an overflow row.
    static func relativeCachePath(_ key: [UInt8], below base: [UInt8]) -> (path: TreePath, isOverflow: Bool) {
        var rest = key[base.count...]
        var isOverflow = false
        if rest.last == overflowMarker {
            isOverflow = true
            rest = rest.dropLast()
        }
        let keys = rest.split(separator: separator).map { ChildKey(String(decoding: $0, as: UTF8.self)) }
        return (TreePath(keys: keys), isOverflow)
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    static func readBigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    package static func settingKey(_ name: String) -> [UInt8] { settingPrefix + Array(name.utf8) }
    static func writeKey(_ writeId: Int64) -> [UInt8] { writePrefix + bigEndian(UInt64(bitPattern: writeId)) }
    static func queryKey(_ queryId: Int64) -> [UInt8] { queryPrefix + bigEndian(UInt64(bitPattern: queryId)) }
    static func trackedKeysPrefix(_ queryId: Int64) -> [UInt8] { trackedKeyPrefix + bigEndian(UInt64(bitPattern: queryId)) }
}
