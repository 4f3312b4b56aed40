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
        subcommands: [WriteOffline.self, Drain.self, ConfigureApp.self, Pin.self, Increment.self, NamedTransaction.self])
}

/// A client of `url` with persistence on `backend` in `directory` (LMDB and LevelDB registered).
func persistentDatabase(url: String, backend: String, directory: String) throws -> Database {
    Database.registerPersistenceBackend(.lmdb)
    Database.registerPersistenceBackend(.leveldb)
    let database = try Database(url: url)
    database.isPersistenceEnabled = true
    database.persistenceBackendName = backend
    database.persistenceDirectory = directory
    return database
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
        let database = try persistentDatabase(url: url, backend: backend, directory: directory)
        database.goOffline()
        writeAll(to: database.reference(withPath: path))
        while true { try await Task.sleep(for: .seconds(60)) }
    }

    /// Each `setValue` returns once the write is durable in the local queue; only then is it reported.
    private func writeAll(to ref: DatabaseReference) {
        for index in 0..<count {
            ref.child("items/\(index)").setValue(index)
            ref.child("last").setValue(index)
            report("wrote \(index)")
        }
        report("done")
    }

    /// Writes a line to standard output unbuffered, so a SIGKILL loses nothing already reported.
    private func report(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

struct Drain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain", abstract: "Open a persistence directory online and report the marker as it arrives locally.")

    @Option(help: "The database URL.") var url: String
    @Option(help: "The persistence backend.") var backend: String
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "Seconds to run.") var seconds: Int = 20

    func run() async throws {
        let database = try persistentDatabase(url: url, backend: backend, directory: directory)
        let start = ContinuousClock.now
        let ref = database.reference(withPath: "queue/last")
        FileHandle.standardOutput.write(Data("opened after \(ContinuousClock.now - start)\n".utf8))
        ref.observe(.value) { snapshot in
            FileHandle.standardOutput.write(Data("local \(snapshot.value ?? "nil") at \(ContinuousClock.now - start)\n".utf8))
        }
        try await Task.sleep(for: .seconds(seconds))
    }
}

struct Pin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Pin a location with keepSynced(true) and persistence on, print `pinned` once its data is cached, then wait to be killed.")

    @Option(help: "The database URL.") var url: String
    @Option(help: "The persistence backend.") var backend: String
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "The location to pin.") var path: String

    func run() async throws {
        let database = try persistentDatabase(url: url, backend: backend, directory: directory)
        let ref = database.reference(withPath: path)
        ref.keepSynced(true)
        // A one-time read answered from the pinned listen: the data is cached once it returns.
        _ = try await ref.singleEvent(of: .value)
        FileHandle.standardOutput.write(Data("pinned\n".utf8))
        while true { try await Task.sleep(for: .seconds(60)) }
    }
}

struct ConfigureApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "configure-app",
        abstract: "Call FirebaseApp.configure() and print the default database's URL and app (for FirebaseApp's tests).")

    func run() async throws {
        FirebaseApp.configure()
        let database = Database.database()
        print("url \(database.reference().url) app \(database.app?.name ?? "none")")
    }
}
