import CoreTree
import Foundation
import SyncClient
import SyncProtocol

/// The baseline of the acknowledgement phase, measured in the same run: the same writes queued on
/// a bare ``PersistentConnection`` (no cache, no pending-write tree, no listeners, no local
/// persistence), then acknowledged by the same in-process server. The client's own figure divided
/// by this one is the share of the wire and the server the client library keeps.
enum BareConnectionAcks {
    /// Ignores everything the connection reports.
    private final class SilentDelegate: ConnectionDelegate {
        func connectionDidConnect(serverTimeOffsetMilliseconds: Int64, sessionID: String) {}
        func connectionDidDisconnect() {}
        func connectionDidReceive(_ push: DataPush, at path: TreePath, tag: Int?) {}
        func connectionAuthStatusChanged(authenticated: Bool) {}
        func connectionListenRevoked(_ request: ListenRequest, status: WireStatus) {}
        func connectionDidShutDown(reason: String) {}
    }

    static func measure(count: Int, server: InProcessServer, timeout: Duration) async throws -> AckResult {
        let connection = PersistentConnection(
            endpoint: ConnectionEndpoint(host: "127.0.0.1", port: server.port, secure: false, namespace: "acks-bare"),
            transport: WebSocketTransport(), delegate: SilentDelegate())
        defer { connection.shutdown() }
        let acknowledged = Signal()
        for index in 0..<count {
            let last = index == count - 1
            connection.put(path: TreePath(keys: ["bench", ChildKey("\(index)")]), data: Node(.number(Double(index)))) { status in
                if last {
                    if !status.isOK { Report.line("  the bare connection's last write failed: \(status)") }
                    acknowledged.fire(at: ContinuousClock.now)
                }
            }
        }
        return try await AckResult.timing(count, until: acknowledged, timeout: timeout, of: "the bare connection") {
            connection.start()
        }
    }
}
