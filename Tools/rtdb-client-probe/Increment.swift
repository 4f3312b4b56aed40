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

/// A WebSocket transport that kills the process when the reply to the write carrying `marker`
/// arrives, before the client sees it.
struct KillAtAckTransport: Transport {
    let marker: String

    func connect(to endpoint: ConnectionEndpoint, lastSessionID: String?) async throws -> any TransportConnection {
        let inner = try await WebSocketTransport().connect(to: endpoint, lastSessionID: lastSessionID)
        return KillAtAckConnection(inner: inner, marker: marker, watched: WatchedRequest())
    }
}

/// The request number of the marked write, once sent.
final class WatchedRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var number: Int?
    var value: Int? {
        get { lock.withLock { number } }
        set { lock.withLock { number = newValue } }
    }
}

struct KillAtAckConnection: TransportConnection {
    let inner: any TransportConnection
    let marker: String
    let watched: WatchedRequest

    func send(_ frame: String) async throws {
        if frame.contains("\"a\":\"m\""), frame.contains("\"\(marker)\""), let number = KillAtAckConnection.requestNumber(in: frame) {
            watched.value = number
        }
        try await inner.send(frame)
    }

    var frames: AsyncThrowingStream<String, any Error> {
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream()
        let (inner, watched) = (self.inner, self.watched)
        Task {
            do {
                for try await frame in inner.frames {
                    if let number = watched.value, frame.contains("\"b\":{\"s\":\"ok\""),
                       KillAtAckConnection.requestNumber(in: frame) == number {
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
