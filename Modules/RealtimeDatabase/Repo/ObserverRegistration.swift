import CoreTree
import Foundation
import QueryEngine
import Synchronization

/// One `observe` call: the event type, the blocks, and whether it is still wanted.
///
/// The sync tree holds it as an `EventRegistration` (compared by identity); its blocks run on the
/// callback queue, and not at all once it is removed, even for events already queued.
///
/// `@unchecked Sendable`: its blocks are the app's non-`Sendable` closures, run on the callback
/// queue only; `onFirstEvent` is set before the registration is shared and `lastDelivered` is
/// touched on the repo queue only. Whether it is still wanted is behind a `Mutex`.
final class ObserverRegistration: EventRegistration, @unchecked Sendable {
    typealias Callback = (DataSnapshot, String?) -> Void
    typealias CancelCallback = (any Error) -> Void

    let handle: DatabaseHandle
    let eventType: DataEventType
    private let callback: Callback?
    private let cancelCallback: CancelCallback?
    /// For `observeSingleEvent`: deliver one event, then call `onFirstEvent`.
    private let once: Bool
    /// Whether blocks may still run, and whether a single-event observer has had its event.
    private let state = Mutex((active: true, fired: false))
    var onFirstEvent: (@Sendable () -> Void)?
    /// Whether a `value` observer also hears when only its snapshot's metadata changes.
    let includeMetadataChanges: Bool
    /// For metadata observers, touched on the repo queue only: the last snapshot delivered.
    var lastDelivered: (node: Node, path: TreePath, index: QueryIndex, metadata: SnapshotMetadata)?

    init(handle: DatabaseHandle, eventType: DataEventType, once: Bool = false, includeMetadataChanges: Bool = false,
         callback: Callback?, cancel: CancelCallback?) {
        self.handle = handle
        self.eventType = eventType
        self.once = once
        self.includeMetadataChanges = includeMetadataChanges && eventType == .value && !once
        self.callback = callback
        self.cancelCallback = cancel
    }

    func responds(to type: EventType) -> Bool {
        switch type {
        case .value: eventType == .value
        case .childAdded: eventType == .childAdded
        case .childRemoved: eventType == .childRemoved
        case .childChanged: eventType == .childChanged
        case .childMoved: eventType == .childMoved
        }
    }

    var wantsCancelEvents: Bool { cancelCallback != nil || once }

    /// No more blocks after this.
    func deactivate() { state.withLock { $0.active = false } }

    /// Whether a block may run now; for single-event observers, true only the first time.
    private func claim() -> Bool {
        state.withLock { state in
            guard state.active, !(once && state.fired) else { return false }
            state.fired = true
            return true
        }
    }

    /// Runs the block (on the callback queue).
    func deliver(_ snapshot: DataSnapshot, previousSiblingKey: String?) {
        guard claim() else { return }
        callback?(snapshot, previousSiblingKey)
        if once { onFirstEvent?() }
    }

    /// Runs the cancel block (on the callback queue); the observer is gone afterwards.
    func cancelled(_ error: DatabaseError) {
        guard claim() else { return }
        deactivate()
        cancelCallback?(error)
    }
}

/// The registration `keepSynced(true)` adds: it wants no events, it only keeps the listen alive.
final class KeepSyncedRegistration: EventRegistration {
    func responds(to type: EventType) -> Bool { false }
    var wantsCancelEvents: Bool { false }
}
