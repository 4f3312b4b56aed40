import ArgumentParser
import Foundation
@_spi(Testing) import RealtimeDatabase

/// One run of the named-transaction test: register the `add` handler (adds its argument to the
/// number at the location), start `add(1)` at `--path` and, with `--kill-at-ack N`, SIGKILL this
/// process when the N-th acknowledgement of a compare-and-set there arrives (N = 2 when a
/// transaction restored from the last run goes first).
struct NamedTransaction: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transaction",
        abstract: "Run the named transaction add(1) with persistence on, optionally SIGKILL self at an ack; print how it ended.")

    @Option(help: "The database URL.") var url: String
    @Option(help: "The persistence backend.") var backend: String
    @Option(help: "The persistence directory.") var directory: String
    @Option(help: "The location of the number.") var path: String = "tally"
    @Option(help: "SIGKILL this process at the N-th ok reply to a compare-and-set at the location.") var killAtAck: Int?
    @Flag(help: "Start no new transaction: only let one restored from the last run finish.") var restoredOnly = false
    @Flag(help: "Queue the transaction offline, print `queued`, and wait to be killed.") var offline = false

    func run() async throws {
        let database = try persistentDatabase(url: url, backend: backend, directory: directory)
        if let killAtAck { database.useTransport(KillAtAckTransport(putAt: "/" + path, ackNumber: killAtAck)) }
        if offline { database.goOffline() }
        let finished = AsyncStream<String>.makeStream()
        database.registerTransaction(named: "add", { data, arguments in
            data.value = NamedTransaction.number(data.value) + NamedTransaction.number(arguments)
            return .success(withValue: data)
        }, completion: { error, committed, snapshot in
            finished.continuation.yield("restored \(error.map { "\($0)" } ?? "ok") committed=\(committed) value=\(snapshot?.value ?? "nil")")
        })
        let ref = database.reference(withPath: path)
        if !restoredOnly {
            ref.runTransaction(named: "add", arguments: 1) { error, committed, snapshot in
                finished.continuation.yield("new \(error.map { "\($0)" } ?? "ok") committed=\(committed) value=\(snapshot?.value ?? "nil")")
            }
        }
        if offline {
            FileHandle.standardOutput.write(Data("queued\n".utf8))
            while true { try await Task.sleep(for: .seconds(60)) }
        }
        for await line in finished.stream {
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            if line.hasPrefix("new") || restoredOnly { break }
        }
        for await count in database.pendingWriteCounts where count == 0 { break }
        FileHandle.standardOutput.write(Data("done\n".utf8))
    }

    /// A JSON number as a Double (0 for anything else).
    static func number(_ value: Any?) -> Double {
        switch value {
        case let value as Int: Double(value)
        case let value as Double: value
        default: 0
        }
    }
}
