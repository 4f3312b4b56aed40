import HummingbirdCore
import ServerCore

/// Pauses accepting while a listener's connections would leave no file descriptors for the
/// stores, and logs it: the last line of defence under the connection cap (which answers 503
/// while descriptors remain), so running out of descriptors slows clients down instead of failing
/// the server's own files.
struct DescriptorBackoff: AvailableConnectionsDelegate {
    let ceiling: Int
    let warnings: LimitWarnings
    private var open = 0

    init(ceiling: Int, warnings: LimitWarnings) {
        self.ceiling = ceiling
        self.warnings = warnings
    }

    mutating func connectionOpened() { open += 1 }
    mutating func connectionClosed() { open -= 1 }

    func isAcceptingNewConnections() -> Bool {
        guard open < ceiling else {
            warnings.warn(.fileDescriptors, "pausing accepts: \(open) connections leave no file descriptors to spare (raise `ulimit -n`)")
            return false
        }
        return true
    }
}
