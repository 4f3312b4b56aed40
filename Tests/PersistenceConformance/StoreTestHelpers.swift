import Foundation
public import Persistence

/// Helpers shared by the suite and the backends' own tests.
public enum StoreTestHelpers {
    /// The path of a fresh directory (not yet created) under the temporary directory.
    public static func temporaryDirectoryPath(prefix: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    }

    /// Runs `body` with the path of a fresh directory that is removed afterwards.
    public static func withTemporaryDirectory(prefix: String, _ body: (String) throws -> Void) throws {
        let directory = temporaryDirectoryPath(prefix: prefix)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    /// The store's entries in `range` as `[key, value]` pairs, stopping after `limit`.
    public static func collect(
        _ store: any OrderedKeyValueStore, _ range: KeyRange, reverse: Bool = false, limit: Int = .max
    ) throws -> [[[UInt8]]] {
        var entries: [[[UInt8]]] = []
        try store.scan(range, reverse: reverse) { key, value in
            entries.append([key, value])
            return entries.count < limit
        }
        return entries
    }
}
