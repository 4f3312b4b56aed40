import SyncProtocol
import Synchronization

/// When a connection last sent something, shared with its keep-alive task.
final class SendClock: Sendable {
    private let lastSent: Mutex<ContinuousClock.Instant>

    init() {
        lastSent = Mutex(.now)
    }

    /// Records a send now.
    func didSend() {
        lastSent.withLock { $0 = .now }
    }

    /// The last send.
    var last: ContinuousClock.Instant { lastSent.withLock { $0 } }
}
