import ArgumentParser
import Foundation
@_spi(Testing) import RealtimeDatabase
import SyncClient

/// One run of the exactly-once test: queue an increment (with a marker naming the run) and, with
/// `--kill-at-ack`, kill this process with SIGKILL the moment the server's acknowledgement of it
/// arrives, after the server committed it and before the client removed it from its queue.
struct Increment: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "increment",
        abstract: "Queue counter += 1 (marked with the run), optionally SIGKILL self when its ack arrives; or drain the queue.")

    @Option(help: "The database URL.") var url: String
    @Option(help: "The persistence backend.") var backend: String
    @Option(help: "The persistence directory.") var directory: String
    @Option(name: .customLong("run"), help: "The run's number (its marker is runs/r<run>); omit to only send what is queued.") var runNumber: Int?
    @Flag(help: "SIGKILL this process when the acknowledgement of this run's write arrives.") var killAtAck = false

    func run() async throws {
        let database = try persistentDatabase(url: url, backend: backend, directory: directory)
        let marker = runNumber.map { "runs/r\($0)" }
        if killAtAck, let marker { database.useTransport(KillAtAckTransport(marker: marker)) }
        let root = database.reference()
        if let run = runNumber {
            root.updateChildValues(["counter": ServerValue.increment(1), "runs/r\(run)": true], withCompletionBlock: { _, _ in })
            FileHandle.standardOutput.write(Data("queued \(run)\n".utf8))
        }
        for await count in database.pendingWriteCounts where count == 0 { break }
        FileHandle.standardOutput.write(Data("drained\n".utf8))
    }
}

/// A WebSocket transport that kills the process when the `ackNumber`-th `ok` reply to a write
/// `matches` selects arrives, before the client sees it: after the server committed the write and
/// before the client could remove it from its queue.
struct KillAtAckTransport: Transport {
    let matches: @Sendable (String) -> Bool
    var ackNumber = 1

    /// Kills at the ack of the update carrying `marker` as a key.
    init(marker: String) {
        matches = { $0.contains("\"a\":\"m\"") && $0.contains("\"\(marker)\"") }
    }

    /// Kills at the `ackNumber`-th ok reply to a put at `path` (a transaction's compare-and-set).
    init(putAt path: String, ackNumber: Int) {
        matches = { $0.contains("\"a\":\"p\"") && $0.contains("\"p\":\"\(path)\"") }
        self.ackNumber = ackNumber
    }

    func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection {
        let inner = try await WebSocketTransport().connect(to: endpoint, lastSessionID: lastSessionID)
        return KillAtAckConnection(inner: inner, matches: matches, ackNumber: ackNumber, watched: WatchedRequests())
    }
}

/// The request numbers of the matching writes sent, and how many were acknowledged.
final class WatchedRequests: @unchecked Sendable {
    private let lock = NSLock()
    private var numbers: Set<Int> = []
    private var acks = 0

    func sent(_ number: Int) { lock.withLock { _ = numbers.insert(number) } }

    /// Counts an ok reply to `number` when it is watched; returns the count then.
    func acknowledged(_ number: Int) -> Int? {
        lock.withLock {
            guard numbers.remove(number) != nil else { return nil }
            acks += 1
            return acks
        }
    }
}

struct KillAtAckConnection: TransportConnection {
    let inner: any TransportConnection
    let matches: @Sendable (String) -> Bool
    let ackNumber: Int
    let watched: WatchedRequests

    func send(_ frame: String) async throws {
        if matches(frame), let number = KillAtAckConnection.requestNumber(in: frame) { watched.sent(number) }
        try await inner.send(frame)
    }

    var frames: AsyncThrowingStream<String, any Error> {
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let (inner, watched, ackNumber) = (self.inner, self.watched, self.ackNumber)
        Task {
            do {
                for try await frame in inner.frames {
                    if frame.contains("\"b\":{\"s\":\"ok\""), let number = KillAtAckConnection.requestNumber(in: frame),
                       watched.acknowledged(number) == ackNumber {
                        FileHandle.standardOutput.write(Data("killing at ack\n".utf8))
                        kill(getpid(), SIGKILL)
                    }
                    continuation.yield(frame)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }

    func close() async { await inner.close() }

    static func requestNumber(in frame: String) -> Int? {
        guard let range = frame.firstRange(of: "\"r\":") else { return nil }
        return Int(frame[range.upperBound...].prefix { $0.isNumber })
    }
}
