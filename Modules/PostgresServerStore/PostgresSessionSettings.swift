/// The settings a node's PostgreSQL sessions start with, sent in the startup packet.
///
/// A node cut off from PostgreSQL (or stalled) in the middle of a commit leaves its transaction
/// open on the server, holding the namespace's row lock: PostgreSQL waits for the next command
/// of a silent client indefinitely (its TCP keepalives default to two hours), so every other
/// node's commits to that namespace, and the dead node's onDisconnect writes run elsewhere,
/// would wait that long. These settings bound it:
/// - `idle_in_transaction_session_timeout`: a session idle inside a transaction for longer than
///   a commit may take on its node (``commitSeconds``) plus a second is ended by the server,
///   which rolls the transaction back. The node gave up on it already.
/// - TCP keepalives and `tcp_user_timeout` on the server's side of the connection: a peer that
///   is gone is noticed within about ten seconds, whether or not it is inside a transaction.
///
/// Transactions that may idle legitimately (an export waiting for its reader) opt out with
/// `SET LOCAL idle_in_transaction_session_timeout = 0`; they take no locks.
enum PostgresSessionSettings {
    /// How long a node's commit may take, from asking for a connection to `COMMIT`, before it
    /// gives up and the write fails.
    static let commitSeconds = 5

    /// The startup parameters of a node's sessions.
    static let node: [(String, String)] = [
        ("idle_in_transaction_session_timeout", "\((commitSeconds + 1) * 1000)"),
    ] + keepalives

    /// Detecting a vanished peer: first probe after 5 s of silence, then every second, 3
    /// unanswered probes end the session; data the server sent unacknowledged for 10 s too.
    static let keepalives: [(String, String)] = [
        ("tcp_keepalives_idle", "5"),
        ("tcp_keepalives_interval", "1"),
        ("tcp_keepalives_count", "3"),
        ("tcp_user_timeout", "10000"),
    ]
}
