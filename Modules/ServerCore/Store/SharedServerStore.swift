public import CoreTree

/// A ``ServerStore`` that several rtdb-server processes (nodes) share, so each serves the same
/// namespace: PostgreSQL's `PostgresServerStore`.
///
/// Every commit is one entry of the namespace's change log, numbered by a sequence with no gaps.
/// A node keeps the namespace's tree in memory at some sequence number and catches up by
/// replaying the entries after it, in order. Writes are decided under the namespace's write
/// lock, against the committed state: ``commitExclusively(after:_:)`` first hands over what other
/// nodes committed since the node's sequence, then commits what the node decided, so two
/// compare-and-set writes from different nodes never both win.
///
/// A store promises, beyond ``ServerStore``'s:
/// - **One order**: entries are numbered 1, 2, 3, ... per namespace, each committed atomically
///   with the tree change it describes; ``changes(after:)`` returns them in that order.
/// - **Exclusive decisions**: while `decide` runs, no other commit to the namespace can happen.
/// - **Wake-ups**: ``onChange(_:)`` handlers are called soon after another node commits (a missed
///   wake-up only delays a node until the next one or its periodic check).
public protocol SharedServerStore: ServerStore {
    /// The tree and the sequence number of the last change it includes, read together.
    func loadWithSequence() async throws -> (root: Node, sequence: UInt64)

    /// The entries logged after `sequence`, in order; `nil` when the log was trimmed past it (the
    /// node must load the whole tree again).
    func changes(after sequence: UInt64) async throws -> [SharedLogEntry]?

    /// Takes the namespace's write lock, passes `decide` the entries logged after `sequence`
    /// (`nil` when trimmed past it), commits the ``SharedCommit`` it returns as the next entry,
    /// and releases the lock.
    ///
    /// - Returns: the sequence number the node is at afterwards (its new entry's, or the last
    ///   one handed to `decide` when it returned `nil`).
    /// - Throws: the store's error when the commit fails or cannot be made (the database is
    ///   unreachable, say); nothing of `decide`'s result was committed then, unless the error is a
    ///   ``SharedCommitFailure`` that says it may have been (its answer was lost).
    func commitExclusively(
        after sequence: UInt64,
        _ decide: @escaping @Sendable ([SharedLogEntry]?) async throws -> SharedCommit?
    ) async throws -> UInt64

    /// Calls `handler` whenever another node may have committed to this namespace.
    func onChange(_ handler: @escaping @Sendable () -> Void)

    /// Holds `writes` as the onDisconnect writes of `connection` (replacing what it held), under
    /// this node's lease: if the node dies, another node runs them (see
    /// ``ServerStoreProvider/claimOrphanedOnDisconnects()``). No writes: nothing is held.
    func holdOnDisconnect(connection: String, writes: [HeldWrite]) async throws

    /// Takes back `connection`'s held writes when it ends on this (live) node; `false` when
    /// another node already claimed them (they ran there).
    func takeOnDisconnect(connection: String) async throws -> Bool
}

/// An onDisconnect write and the caller that registered it (its rights are judged again when it
/// runs).
public struct HeldWrite: Sendable {
    /// The write, server values unresolved.
    public var operation: WriteOperation
    /// Who registered it.
    public var caller: Caller

    /// A held write.
    public init(operation: WriteOperation, caller: Caller) {
        self.operation = operation
        self.caller = caller
    }
}

/// An error of a ``SharedServerStore`` that knows whether the commit it failed may still have
/// been made: the commit was sent and its answer never came. The node catches up from the log
/// either way; the writer is told the write may have been made.
public protocol SharedCommitFailure: Error {
    /// Whether the commit may have been made after all.
    var mayHaveCommitted: Bool { get }
}

/// The onDisconnect writes of a connection whose node died, claimed by this node to run once.
public struct OrphanedOnDisconnect: Sendable {
    /// The connection's namespace.
    public var namespace: String
    /// Its writes, in the order they were registered.
    public var writes: [HeldWrite]

    /// Claimed writes.
    public init(namespace: String, writes: [HeldWrite]) {
        self.namespace = namespace
        self.writes = writes
    }
}

/// One commit in a shared namespace's change log.
public struct SharedLogEntry: Sendable {
    /// Its place in the namespace's order (1 for the first commit).
    public var sequence: UInt64
    /// The writes it made, server values resolved, in the order they were applied.
    public var writes: [WriteOperation]
    /// The settings it saved (the security rules, say).
    public var settings: [StoreSetting]

    /// An entry.
    public init(sequence: UInt64, writes: [WriteOperation], settings: [StoreSetting]) {
        self.sequence = sequence
        self.writes = writes
        self.settings = settings
    }
}

/// What a node commits under the write lock: the tree change, and the log entry's content.
public struct SharedCommit: Sendable {
    /// The tree after the writes and where it changed (`nil` for a commit of settings only).
    public var change: StoreChange?
    /// The writes, server values resolved, as other nodes replay them.
    public var writes: [WriteOperation]
    /// Settings to save with it.
    public var settings: [StoreSetting]

    /// A commit.
    public init(change: StoreChange?, writes: [WriteOperation], settings: [StoreSetting] = []) {
        self.change = change
        self.writes = writes
        self.settings = settings
    }
}

/// Opens the stores of a server whose namespaces do not live in its data directory (PostgreSQL).
///
public protocol ServerStoreProvider: Sendable {
    /// A short name for logs (`postgres`).
    var name: String { get }
    /// Opens the store of namespace `name`, creating it when new.
    func openStore(namespace: String) async throws -> any ServerStore
    /// Releases what the provider holds (connections); called once at shutdown.
    func shutdown() async

    /// Claims, once and for this node only, the onDisconnect writes held by nodes whose lease
    /// ran out (killed, or cut off from the database); the server runs them. The server calls it
    /// about once a second.
    func claimOrphanedOnDisconnects() async throws -> [OrphanedOnDisconnect]
}
