// serverstore-crash-writer: the child process of the ServerStore conformance suite.
//
//   serverstore-crash-writer <store> <directory> <first commit>
//       Opens the embedded server store on backend <store> and commits forever, printing
//       `committed N` after each commit returns, until it is killed.
import Foundation
import Persistence
import PersistenceLMDB
import PersistenceLevelDB
import PersistenceSQLite
import RealtimeServer
import ServerStoreConformance

let arguments = CommandLine.arguments
guard arguments.count == 4, let first = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: serverstore-crash-writer <store> <directory> <first commit>\n".utf8))
    exit(2)
}
let backends = StorageBackends([.sqlite, .lmdb, .leveldb, .memory])
let suite = ServerStoreConformance(name: arguments[1]) { directory in
    try EmbeddedServerStore(store: try backends.open(arguments[1], directory: directory))
}
do {
    try suite.runCrashWriter(directory: arguments[2], first: first)
} catch {
    FileHandle.standardError.write(Data("serverstore-crash-writer: \(error)\n".utf8))
    exit(1)
}
