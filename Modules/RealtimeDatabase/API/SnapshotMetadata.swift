/// Where a snapshot's data stands (beyond Firebase; the names are Firestore's).
///
/// Observers added with `observe(_:includeMetadataChanges:with:)` also hear an event when only
/// this changes (a write acknowledged, the server's data arriving); other observers never do, so
/// code written for Firebase sees the events it always saw.
public struct SnapshotMetadata: Sendable, Equatable, CustomStringConvertible {
    /// Whether the data includes local writes the server has not acknowledged yet (at the
    /// snapshot's location, above it or below it; transactions in flight count).
    public let hasPendingWrites: Bool
    /// Whether the data comes from the local cache rather than from the server in this
    /// connection: true offline, after a restart until the server answers, and for data no
    /// listen has had from the server since the client (re)connected.
    public let isFromCache: Bool

    /// Metadata with the given flags.
    public init(hasPendingWrites: Bool, isFromCache: Bool) {
        self.hasPendingWrites = hasPendingWrites
        self.isFromCache = isFromCache
    }

    /// Data confirmed by the server, with no local writes pending.
    public static let server = SnapshotMetadata(hasPendingWrites: false, isFromCache: false)

    public var description: String { "SnapshotMetadata(hasPendingWrites: \(hasPendingWrites), isFromCache: \(isFromCache))" }
}
