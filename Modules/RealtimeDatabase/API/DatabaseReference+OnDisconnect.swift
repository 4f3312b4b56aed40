import CoreTree

/// onDisconnect: writes the server makes when this client disconnects, cleanly or not. The server
/// checks them against the rules when they are registered and again when it runs them.
extension DatabaseReference {
    /// Sets `value` here when this client disconnects.
    public func onDisconnectSetValue(_ value: Any?) {
        onDisconnectSet(completion: nil) { () throws(DatabaseError) in try ValueConversion.node(from: value) }
    }

    /// Sets `value` here on disconnect; `block` hears whether the server accepted the registration.
    public func onDisconnectSetValue(_ value: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        onDisconnectSet(completion: block) { () throws(DatabaseError) in try ValueConversion.node(from: value) }
    }

    /// Sets `value` and `priority` here on disconnect.
    public func onDisconnectSetValue(_ value: Any?, andPriority priority: Any) {
        onDisconnectSet(completion: nil) { () throws(DatabaseError) in try Self.node(value, priority: priority) }
    }

    /// Sets `value` and `priority` here on disconnect; `block` hears whether the server accepted it.
    public func onDisconnectSetValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void
    ) {
        onDisconnectSet(completion: block) { () throws(DatabaseError) in try Self.node(value, priority: priority) }
    }

    /// Registers the set once the server has accepted it.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?) async throws -> DatabaseReference {
        let node = try ValueConversion.node(from: value)
        return try await awaitWrite { repo, done in try repo.onDisconnectSet(node, at: self.path, completion: done) }
    }

    /// Registers the set of `value` and `priority` once the server has accepted it.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        let node = try Self.node(value, priority: priority)
        return try await awaitWrite { repo, done in try repo.onDisconnectSet(node, at: self.path, completion: done) }
    }

    /// Removes the data here when this client disconnects.
    public func onDisconnectRemoveValue() { onDisconnectSetValue(nil) }

    /// Removes the data here on disconnect; `block` hears whether the server accepted the registration.
    public func onDisconnectRemoveValue(completionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        onDisconnectSetValue(nil, withCompletionBlock: block)
    }

    /// Registers the removal once the server has accepted it.
    @discardableResult
    public func onDisconnectRemoveValue() async throws -> DatabaseReference {
        try await onDisconnectSetValue(nil)
    }

    /// Updates the children here (keys are relative paths) when this client disconnects.
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) {
        onDisconnectUpdate(values, completion: nil)
    }

    /// Updates the children here on disconnect; `block` hears whether the server accepted it.
    public func onDisconnectUpdateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void
    ) {
        onDisconnectUpdate(values, completion: block)
    }

    /// Registers the update once the server has accepted it.
    @discardableResult
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        let children = try Self.updateChildren(values)
        return try await awaitWrite { repo, done in try repo.onDisconnectUpdate(children, at: self.path, completion: done) }
    }

    /// Cancels every onDisconnect write registered here and below.
    public func cancelDisconnectOperations() {
        database.repo.onDisconnectCancel(at: path, completion: nil)
    }

    /// Cancels the onDisconnect writes here and below; `block` hears when the server has.
    public func cancelDisconnectOperations(completionBlock block: (((any Error)?, DatabaseReference) -> Void)?) {
        database.repo.onDisconnectCancel(at: path, completion: completionAdapter(block))
    }

    /// Cancels the onDisconnect writes here and below once the server has.
    @discardableResult
    public func cancelDisconnectOperations() async throws -> DatabaseReference {
        try await awaitWrite { repo, done in repo.onDisconnectCancel(at: self.path, completion: done) }
    }

    private func onDisconnectSet(completion: (((any Error)?, DatabaseReference) -> Void)?, _ makeNode: () throws(DatabaseError) -> Node) {
        let finish = completionAdapter(completion)
        do {
            try database.repo.onDisconnectSet(try makeNode(), at: path, completion: finish)
        } catch {
            failed(error, finish)
        }
    }

    private func onDisconnectUpdate(_ values: [AnyHashable: Any], completion: (((any Error)?, DatabaseReference) -> Void)?) {
        let finish = completionAdapter(completion)
        do {
            try database.repo.onDisconnectUpdate(try Self.updateChildren(values), at: path, completion: finish)
        } catch {
            failed(error, finish)
        }
    }
}
