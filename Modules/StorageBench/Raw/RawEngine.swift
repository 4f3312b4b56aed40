import CoreTree
import Persistence

/// A storage engine driven straight through its C library: the same keys and values the
/// backend stores, with none of our layers (no checksums, no size accounting, no group commit,
/// no chunked scans). Each workload also runs on it, so every result has a ratio to raw.
///
/// Each implementation uses the settings its backend uses (SQLite's WAL and table, LMDB's
/// flags, LevelDB's options), so the ratio shows what our code costs, not a different tuning.
protocol RawEngine: AnyObject, Sendable {
    /// Applies `batch` in one transaction; durable batches are on stable storage when it returns.
    func write(_ batch: WriteBatch, durable: Bool) throws
    /// Reads every entry in `range`, returning how many bytes of keys and values it read.
    func scan(_ range: KeyRange) throws -> Int
    /// Flushes and closes the engine.
    func close()
}

/// A raw engine's failure, with the C library's message.
struct RawEngineError: CodedError, CustomStringConvertible {
    let description: String
    var code: String { "engineFailed" }
    var message: String { description }
    var underlyingError: (any Error)? { nil }
}

/// The raw engines, by backend name.
enum RawEngines {
    /// Opens the raw engine for backend `name` in `directory`, or `nil` when it has none.
    static func open(_ name: String, directory: String) throws -> (any RawEngine)? {
        switch name {
        case "sqlite": try RawSQLite(directory: directory)
        case "lmdb": try RawLMDB(directory: directory)
        case "leveldb": try RawLevelDB(directory: directory)
        default: nil
        }
    }

    /// Whether backend `name` has a raw engine to compare with.
    static func exists(for name: String) -> Bool { ["sqlite", "lmdb", "leveldb"].contains(name) }
}
