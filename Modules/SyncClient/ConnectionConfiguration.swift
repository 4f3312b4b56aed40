import Foundation
import SyncProtocol

/// How a ``PersistentConnection`` times its connection: keep-alive, connect timeout and reconnect backoff.
public struct ConnectionConfiguration: Sendable {
    /// After this long with nothing sent, the keep-alive frame `0` is sent (45 s, as the Firebase SDKs).
    public var keepAliveInterval: Duration = .seconds(45)
    /// How long opening the socket and receiving the server's handshake may take (30 s).
    public var connectTimeout: Duration = .seconds(30)
    /// How long a get waits for a connection before it fails with `disconnected`, so the caller
    /// answers from its cache (3 s, as the Firebase SDKs). A get already sent waits for its reply.
    public var getConnectTimeout: Duration = .seconds(3)
    /// The delays between reconnect attempts.
    public var backoff: BackoffPolicy = .init()
    /// The counter sent once, on the first connection, as the stats request `{"c":{name:1}}`; nil sends none.
    public var sdkStatsName: String? = "sdk.swift.1-0-0"
    /// The largest message accepted from the server, in UTF-8 bytes; a larger one drops the connection.
    public var maxIncomingMessageBytes: Int = 1 << 28
    /// The clock for backoff, timeouts and keep-alive (the system's monotonic clock by default).
    public var clock: ConnectionClock = .continuous
    /// The local wall-clock time, in milliseconds since 1970, read once when a handshake arrives
    /// to compute the server time offset (`serverTimestamp - wallClock()`). The system clock by
    /// default; tests pass a fixed reading so the offset they expect is exact.
    public var wallClock: @Sendable () -> Int64 = ConnectionConfiguration.systemWallClock

    /// The system's wall clock in whole milliseconds since 1970, rounded to the nearest.
    public static let systemWallClock: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// The default configuration.
    public init() {}
}
