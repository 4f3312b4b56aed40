import SyncProtocol
import Synchronization

/// When a connection last sent something, shared with its keep-alive task.
final class SendClock: Sendable {
    private let clock: ConnectionClock
    private let lastSent: Mutex<Duration>

    init(clock: ConnectionClock) {
        self.clock = clock
        lastSent = Mutex(clock.now)
    }

    /// Records a send now.
    func didSend() {
        let now = clock.now
        lastSent.withLock { $0 = now }
    }

    /// The last send, on the connection's clock.
    var last: Duration { lastSent.withLock { $0 } }

    /// How long ago the last send was.
    var idle: Duration { clock.now - last }
}
