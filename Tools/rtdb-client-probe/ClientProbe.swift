import ArgumentParser
import Foundation
import Persistence
import PersistenceLevelDB
import PersistenceLMDB
import RealtimeDatabase

/// A client process for the end-to-end tests: it makes writes with persistence on and reports
/// each one once `setValue` has returned (durable in the local queue), so a test can kill it
/// with SIGKILL at a known point and check that a later client sends every write.
@main
struct ClientProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtdb-client-probe",
        abstract: "A RealtimeDatabase client process for tests and benchmarks.",
        subcommands: [WriteOffline.self])
}

struct WriteOffline: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write-offline",
        abstract: "Queue writes offline with persistence on, print `wrote N` after each, then wait to be killed.")

    @Option(help: "The database URL (http://host:port?ns=<namespace>).") var url: String
    @Option(help: "The persistence backend: sqlite, lmdb or leveldb.") var backend: String
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "How many writes to make.") var count: Int = 100
    @Option(help: "The location to write below.") var path: String = "queue"

    func run() async throws {
        Database.registerPersistenceBackend(.lmdb)
        Database.registerPersistenceBackend(.leveldb)
        let database = try Database(url: url)
        database.isPersistenceEnabled = true
        database.persistenceBackendName = backend
        database.persistenceDirectory = directory
        database.goOffline()
        let ref = database.reference(withPath: path)
        for index in 0..<count {
            ref.child("items/\(index)").setValue(index)
            ref.child("last").setValue(index)
            print("wrote \(index)")
            fflush(stdout)
        }
        print("done")
        fflush(stdout)
        while true { try await Task.sleep(for: .seconds(60)) }
    }
}
