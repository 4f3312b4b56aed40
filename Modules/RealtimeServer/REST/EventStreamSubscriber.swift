import CoreTree
import SyncProtocol
import QueryEngine
import ServerCore

/// Delivers listen updates to one REST event stream (`text/event-stream`) as `put` and `patch`
/// events with paths relative to the listened location, in the REST API's plain JSON.
///
/// Its events wait in an ``Outbox``, like a WebSocket connection's messages: a reader too slow
/// for the caps ends the stream, and ``close()`` (the client went away) ends it at once.
final class EventStreamSubscriber: DataSubscriber {
    let outbox: Outbox

    init(outbox: Outbox) { self.outbox = outbox }

    /// The events, in order, for the response body: each batch is every event queued since the
    /// body last wrote.
    var events: Outbox.Batches { outbox.batches }

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

    /// The rules no longer let the client read the location: a `cancel` event ends the stream.
    func revoked(path: TreePath, params: QueryParams, tag: Int?) {
        end(event: "cancel", data: "null")
    }

    /// Sends the periodic `keep-alive` event.
    func keepAlive() { emit(event: "keep-alive", data: "null") }

    /// Sends an event and ends the stream (`cancel`, `auth_revoked`).
    func end(event: String, data: String) {
        emit(event: event, data: data)
        outbox.finish()
    }

    /// Ends the stream at shutdown with a final `keep-alive` event whose `retry` field asks the
    /// client to reconnect in a second (to another node, or to this one once it is back).
    func depart() {
        outbox.enqueue("event: keep-alive\ndata: null\nretry: 1000\n\n")
        outbox.finish()
    }

    /// Ends the stream without a final event: the client is gone.
    func close() { outbox.finish() }

    private func emit(event: String, data: String) {
        outbox.enqueue("event: \(event)\ndata: \(data)\n\n")
    }
}
