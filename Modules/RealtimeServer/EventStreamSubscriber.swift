import CoreTree
import NIOCore
import Synchronization
import SyncProtocol

/// Delivers listen updates to one REST event stream (`text/event-stream`) as `put` and `patch`
/// events with paths relative to the listened location, in the REST API's plain JSON.
final class EventStreamSubscriber: DataSubscriber {
    let events: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let queuedBytes = Mutex(0)
    private let maxQueuedBytes: Int

    init(maxQueuedBytes: Int) {
        self.maxQueuedBytes = maxQueuedBytes
        (events, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
    }

    /// Called when the stream ends (the client went away or was too slow).
    func onTermination(_ body: @escaping @Sendable () -> Void) {
        continuation.onTermination = { _ in body() }
    }

    func send(_ update: ListenUpdate) {
        let relative = "/" + (update.path.relative(to: update.listenPath)?.relativeForm ?? "")
        let path = ServerMessage.quoted(relative)
        switch update.change {
        case .overwrite:
            emit(event: "put", data: "{\"path\":\(path),\"data\":\(update.payload.plainForm)}")
        case .merge:
            emit(event: "patch", data: "{\"path\":\(path),\"data\":\(update.payload.plainForm)}")
        }
    }

    /// Sends the periodic `keep-alive` event.
    func keepAlive() { emit(event: "keep-alive", data: "null") }

    /// Sends an event and ends the stream (`cancel`, `auth_revoked`).
    func end(event: String, data: String) {
        emit(event: event, data: data)
        continuation.finish()
    }

    private func emit(event: String, data: String) {
        let text = "event: \(event)\ndata: \(data)\n\n"
        let size = text.utf8.count
        let accepted = queuedBytes.withLock { queued -> Bool in
            if queued > 0 && queued + size > maxQueuedBytes { return false }
            queued += size
            return true
        }
        guard accepted else {
            // Too slow a reader: end the stream rather than hold unbounded data.
            continuation.finish()
            return
        }
        continuation.yield(ByteBuffer(string: text))
    }

    /// Marks `bytes` as written to the client.
    func didWrite(_ bytes: Int) { queuedBytes.withLock { $0 -= bytes } }
}
