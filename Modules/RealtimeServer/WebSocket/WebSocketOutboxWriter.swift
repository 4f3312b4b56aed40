import NIOCore
import NIOWebSocket
import Synchronization
import SyncProtocol
import ServerCore

/// Sends one WebSocket connection's outbox from the channel's event loop: a message queued while
/// no send is scheduled schedules one, which writes everything waiting as text frames (long
/// messages split) and flushes once.
///
/// A push to a thousand listeners or a group commit's acknowledgements costs one event-loop job
/// per connection, not a task wake-up on the cooperative pool and two hops per message. The
/// frames go straight to the channel, as the WebSocket writer would send them (no extensions are
/// negotiated, and a server does not mask). Written bytes leave the outbox's count when the
/// socket has taken them, so a reader too slow for the cap is still cut off.
final class WebSocketOutboxWriter: Sendable {
    private let outbox: Outbox
    private let channel: any Channel
    /// Whether a send is scheduled on the event loop and has not yet taken the waiting messages.
    private let scheduled = Atomic<Bool>(false)

    /// Sends `outbox`'s messages on `channel` from now on.
    init(outbox: Outbox, channel: any Channel) {
        self.outbox = outbox
        self.channel = channel
        outbox.onEnqueue { [weak self] in self?.schedule() }
    }

    private func schedule() {
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        channel.eventLoop.execute { self.send() }
    }

    /// On the event loop: writes what is waiting and flushes.
    private func send() {
        // Cleared before taking: a message queued after the take schedules the next send.
        scheduled.store(false, ordering: .sequentiallyConsistent)
        let batch = outbox.takeWaiting().messages
        guard !batch.isEmpty else { return }
        var last: EventLoopFuture<Void>?
        for message in batch {
            for frame in FrameSplitter.frames(for: message) {
                last = channel.write(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: frame)))
            }
        }
        channel.flush()
        let outbox = self.outbox
        last?.whenComplete { result in
            switch result {
            case .success: outbox.didWrite(batch)
            case .failure: outbox.finish()
            }
        }
    }
}
