import ArgumentParser
import CoreTree
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import PersistenceSQLite

/// `inspect-cache` (hidden): what a persistence directory holds — tracked queries, their flags,
/// the cache's logical size, and the cached data at one path.
struct InspectCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect-cache", abstract: "Prints what a client's persistence directory holds.", shouldDisplay: false)

    @Option(help: "The persistence backend.") var store: StoreKind
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "A path whose cached data to summarise.") var path: String?

    func run() async throws {
        let backends = StorageBackends([.memory, .sqlite, .lmdb, .leveldb])
        let engine = try StorageEngine(store: try backends.open(store.rawValue, directory: directory))
        let queries = try engine.trackedQueries()
        Report.line("tracked queries: \(queries.count) (complete \(queries.filter(\.isComplete).count),"
            + " active \(queries.filter(\.isActive).count), pinned \(queries.filter(\.isPinned).count))")
        Report.line("cache logical size: \(Format.bytes(Int64(engine.cacheSizeBytes)))")
        Report.line("queued user writes: \(try engine.userWrites().count)")
        for query in queries.prefix(2) { Report.line("  e.g. \(query)") }
        for query in queries.filter({ !$0.isComplete }).prefix(5) { Report.line("  incomplete: \(query)") }
        if let path {
            let node = try engine.serverCache(at: TreePath(validating: path))
            Report.line("cached at \(path): \(node.childCount) children, \(node.jsonString(format: .plain).utf8.count) bytes of JSON")
        }
        try engine.close()
    }
}
