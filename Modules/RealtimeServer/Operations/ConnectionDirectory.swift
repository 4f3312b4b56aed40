import CoreTree
public import Foundation
import NIOCore
import Synchronization
import ServerCore

/// The long-lived client connections a server holds (WebSockets and event streams), each with
/// what an operator asks about it: where it comes from, its namespace, who it is signed in as, and
/// what it holds. The console's connections view and its presence column read it.
public final class ConnectionDirectory: Sendable {
    private let entries = Mutex<[Int: ConnectionSummary]>([:])
    private let nextID = Atomic<Int>(0)

    init() {}

    /// The connections open now, oldest first.
    public var connections: [ConnectionSummary] {
        entries.withLock { Array($0.values) }.sorted { $0.id < $1.id }
    }

    /// Adds a connection; its entry lives until the returned record is closed.
    func open(
        transport: ConnectionSummary.Transport, namespace: String, remoteAddress: String?, path: String? = nil, caller: Caller
    ) -> ConnectionRecord {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let summary = ConnectionSummary(
            id: id, transport: transport, namespace: namespace, remoteAddress: remoteAddress, openedAt: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000), path: path,
            uid: ConnectionSummary.uid(of: caller), isAdmin: caller == .admin, listens: 0, onDisconnectWrites: 0)
        entries.withLock { $0[id] = summary }
        return ConnectionRecord(id: id, directory: self)
    }

    fileprivate func update(_ id: Int, _ change: (inout ConnectionSummary) -> Void) {
        entries.withLock { entries in
            guard var summary = entries[id] else { return }
            change(&summary)
            entries[id] = summary
        }
    }

    fileprivate func close(_ id: Int) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}

/// What the server knows about one open connection.
public struct ConnectionSummary: Sendable, Equatable, Encodable {
    /// How the client is connected.
    public enum Transport: String, Sendable, Encodable {
        /// The wire protocol over a WebSocket (`/.ws`).
        case webSocket = "websocket"
        /// A REST event stream (`Accept: text/event-stream`).
        case eventStream
    }

    /// Unique among the server's connections since it started.
    public let id: Int
    /// How the client is connected.
    public let transport: Transport
    /// The namespace the connection uses.
    public let namespace: String
    /// The peer's address and port, when the socket knows it.
    public let remoteAddress: String?
    /// When the connection opened (to the millisecond).
    public let openedAt: Date
    /// The path an event stream follows; nil for a WebSocket.
    public let path: String?
    /// The `uid` of the user the connection is signed in as, if any.
    public var uid: String?
    /// Whether the connection holds an administrator credential.
    public var isAdmin: Bool
    /// How many listens it holds (1 for an event stream).
    public var listens: Int
    /// How many onDisconnect writes the server holds for it.
    public var onDisconnectWrites: Int

    /// The peer of `channel` as people write it, or `?` when the socket does not know it.
    static func peer(of channel: any Channel) -> String {
        channel.remoteAddress.map(address) ?? "?"
    }

    /// `address` as people write it: `127.0.0.1:5000`, `[::1]:5000`, or a socket's path.
    static func address(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress else { return address.pathname ?? "\(address)" }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return address.port.map { "\(host):\($0)" } ?? host
    }

    static func uid(of caller: Caller) -> String? {
        guard case .user(let auth?) = caller, case .string(let uid)? = auth.immediateChild("uid").leafValue else { return nil }
        return uid
    }
}

/// One connection's entry in a ``ConnectionDirectory``: updated as the connection changes,
/// removed by ``close()``.
final class ConnectionRecord: Sendable {
    let id: Int
    private let directory: ConnectionDirectory

    fileprivate init(id: Int, directory: ConnectionDirectory) {
        self.id = id
        self.directory = directory
    }

    /// Records who the connection is signed in as and what it holds now.
    func update(caller: Caller, listens: Int, onDisconnectWrites: Int) {
        directory.update(id) { summary in
            summary.uid = ConnectionSummary.uid(of: caller)
            summary.isAdmin = caller == .admin
            summary.listens = listens
            summary.onDisconnectWrites = onDisconnectWrites
        }
    }

    func close() { directory.close(id) }
}
