// serverstore-crash-writer: the child process of the ServerStore conformance suite.
//
//   serverstore-crash-writer <store> <directory> <first commit>
//       Opens the embedded server store on backend <store> and commits forever, printing
//       `committed N` after each commit returns, until it is killed.
//
//       The store `postgres` is PostgreSQL at RTDB_TEST_POSTGRES_URL, in a namespace named after
//       <directory>.
//
//   serverstore-crash-writer load <store> <directory>
//       Opens the store, loads its tree once, then checks the whole store as the server's
//       background check does, printing `loaded <hash of the tree> check ok|damaged|failed` or
//       `refused <StorageError code>`, and exits 0: a damaged store must be refused or found
//       damaged by the check, never crash the process or load partly unnoticed.
import CoreTree
import Foundation
import Logging
import Persistence
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import PostgresServerStore
import ServerCore
import ServerStoreConformance

let arguments = CommandLine.arguments
let backends = StorageBackends([.sqlite, .lmdb, .leveldb, .memory])

/// Loads and checks the store once and returns the line that says how it went. A function of its
/// own, so every string it builds is released before the process exits (LeakSanitizer reported
/// the line as a leak while it still sat in the top-level code's frame at `exit(0)`).
func loadReport(backend: String, directory: String) async -> String {
    do {
        let store = try EmbeddedServerStore(store: try backends.open(backend, directory: directory))
        let root = try await store.load()
        let check = (try? await store.check()).map { $0.isSound ? "ok" : "damaged" } ?? "failed"
        try? await store.close()
        return "loaded \(root.hash) check \(check)"
    } catch let error as StorageError {
        return "refused \(error.code)"
    } catch {
        return "refused other \(error)"
    }
}

if arguments.count == 4, arguments[1] == "load" {
    print(await loadReport(backend: arguments[2], directory: arguments[3]))
    exit(0)
}
guard arguments.count == 4, let first = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: serverstore-crash-writer <store> <directory> <first commit>\n".utf8))
    exit(2)
}
let suite: ServerStoreConformance
if arguments[1] == "postgres" {
    let provider = try PostgresStoreProvider(
        url: ProcessInfo.processInfo.environment["RTDB_TEST_POSTGRES_URL"] ?? "", logger: Logger(label: "crash-writer"))
    suite = ServerStoreConformance(name: "postgres") { directory in
        try await provider.openStore(namespace: ServerStoreConformance.namespaceName(forDirectory: directory))
    }
} else {
    suite = ServerStoreConformance(name: arguments[1]) { directory in
        try EmbeddedServerStore(store: try backends.open(arguments[1], directory: directory))
    }
}
do {
    try await suite.runCrashWriter(directory: arguments[2], first: first)
} catch {
    FileHandle.standardError.write(Data("serverstore-crash-writer: \(error)\n".utf8))
    exit(1)
}
