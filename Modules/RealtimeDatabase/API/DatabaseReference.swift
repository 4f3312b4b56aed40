import Foundation
import CoreTree
import Logging
import QueryEngine

/// A location in the database: read it, write it, observe it (Firebase's `DatabaseReference`).
///
/// Writes show in local listeners at once, are kept on disk when persistence is on, and are sent
/// to the server in order (queued while offline). Invalid keys, paths and values write nothing:
/// the completion block (or the `async` form) gets a ``DatabaseError`` with code
/// `invalidArgument`; without a completion block the error is logged.
// @unchecked, as its superclass: immutable, but a subclass of a non-final class cannot be checked.
public final class DatabaseReference: DatabaseQuery, @unchecked Sendable {
    init(database: Database, path: TreePath) {
        super.init(database: database, path: path, params: .default)
    }

    // MARK: - Navigation

    /// The location at a relative path below this one (`a/b/c`). Stops the program for an
    /// invalid path, as Firebase does; check user input with ``validatePath(_:)`` first.
    public func child(_ pathString: String) -> DatabaseReference {
        child(DatabaseReference.validatedRelativePath(pathString))
    }

    func child(_ relative: TreePath) -> DatabaseReference {
        DatabaseReference(database: database, path: path.appending(relative))
    }

    /// A new child location with a unique, chronologically ordered key (a push id).
    public func childByAutoId() -> DatabaseReference {
        let repo = database.repo
        let key = repo.perform { repo.pushIDs.next(milliseconds: repo.serverTime) }
        return child(TreePath(keys: [ChildKey(key)]))
    }

    /// The parent location; `nil` at the root.
    public var parent: DatabaseReference? {
        path.parent.map { DatabaseReference(database: database, path: $0) }
    }

    /// The root location.
    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }

    /// The last segment of the path; `nil` at the root.
    public var key: String? { path.lastKey?.stringValue }

    /// The full URL of this location.
    public var url: String { database.url(forPath: path) }

    /// The location as a URL string (a method, as Swift imports Firebase's `-description`).
    public func description() -> String { url }

    // MARK: - Connection of every database

    /// Disconnects every database instance from its server (as each instance's ``Database/goOffline()``).
    public class func goOffline() { Registry.shared.forEachDatabase { $0.goOffline() } }

    /// Reconnects every database instance (as each instance's ``Database/goOnline()``).
    public class func goOnline() { Registry.shared.forEachDatabase { $0.goOnline() } }

    // MARK: - Writing

    /// Replaces the data here with `value` (`nil` removes it).
    public func setValue(_ value: Any?) {
        write(completion: nil) { () throws(DatabaseError) in try ValueConversion.node(from: value) }
    }

    /// Replaces the data here; `block` hears when the server has it (or why not).
    public func setValue(_ value: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        write(completion: block) { () throws(DatabaseError) in try ValueConversion.node(from: value) }
    }

    /// Replaces the data here and sets its priority.
    public func setValue(_ value: Any?, andPriority priority: Any?) {
        write(completion: nil) { () throws(DatabaseError) in try Self.node(value, priority: priority) }
    }

    /// Replaces the data and priority here; `block` hears when the server has it.
    public func setValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void
    ) {
        write(completion: block) { () throws(DatabaseError) in try Self.node(value, priority: priority) }
    }

    /// Replaces the data here once the server has it.
    ///
    /// The write is on disk (with persistence) and local listeners' events are queued before the
    /// call suspends for the server's answer; the calling task's thread is never blocked.
    @discardableResult
    public func setValue(_ value: Any?) async throws -> DatabaseReference {
        let node = try ValueConversion.node(from: value)
        return try await awaitWrite { repo, done in try await repo.set(node, at: self.path, completion: done) }
    }

    /// Replaces the data and priority here once the server has it.
    @discardableResult
    public func setValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        let node = try Self.node(value, priority: priority)
        return try await awaitWrite { repo, done in try await repo.set(node, at: self.path, completion: done) }
    }

    /// Removes the data here.
    public func removeValue() { setValue(nil) }

    /// Removes the data here; `block` hears when the server has done it.
    public func removeValue(completionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        setValue(nil, withCompletionBlock: block)
    }

    /// Removes the data here once the server has done it.
    @discardableResult
    public func removeValue() async throws -> DatabaseReference {
        try await setValue(nil)
    }

    /// Sets the priority of the data here.
    public func setPriority(_ priority: Any?) {
        child(TreePath(keys: [.priority])).setValue(priority)
    }

    /// Sets the priority of the data here; `block` hears when the server has it.
    public func setPriority(_ priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        child(TreePath(keys: [.priority])).setValue(priority) { error, _ in block(error, self) }
    }

    /// Sets the priority here once the server has it.
    @discardableResult
    public func setPriority(_ priority: Any?) async throws -> DatabaseReference {
        let node = try ValueConversion.node(from: priority)
        let priorityPath = path.appending(TreePath(keys: [.priority]))
        return try await awaitWrite { repo, done in try await repo.set(node, at: priorityPath, completion: done) }
    }

    /// Writes several locations below this one at once: keys are relative paths (`"a/b"`),
    /// `nil` / `NSNull` values remove. All or nothing on the server.
    public func updateChildValues(_ values: [AnyHashable: Any]) {
        updateChildValues(values, completion: nil)
    }

    /// Writes several locations at once; `block` hears when the server has them.
    public func updateChildValues(_ values: [AnyHashable: Any], withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        updateChildValues(values, completion: block)
    }

    /// Writes several locations at once, once the server has them.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        let children = try Self.updateChildren(values)
        return try await awaitWrite { repo, done in try await repo.update(children, at: self.path, completion: done) }
    }

    private func updateChildValues(_ values: [AnyHashable: Any], completion: (((any Error)?, DatabaseReference) -> Void)?) {
        let finish = completionAdapter(completion)
        do {
            let children = try Self.updateChildren(values)
            try database.repo.update(children, at: path, completion: finish)
        } catch {
            failed(error, finish)
        }
    }

    static func node(_ value: Any?, priority: Any?) throws(DatabaseError) -> Node {
        let node = try ValueConversion.node(from: value)
        if let placeholder = try ValueConversion.placeholderPriority(from: priority) {
            // `ServerValue.timestamp()` as the priority: the server resolves it with the value.
            return CoreTree.ServerValue.carrying(node, priority: placeholder)
        }
        return node.withPriority(try ValueConversion.priority(from: priority))
    }

    static func updateChildren(_ values: [AnyHashable: Any]) throws(DatabaseError) -> [(path: TreePath, node: Node)] {
        var children: [(path: TreePath, node: Node)] = []
        for (key, value) in values {
            children.append((try ValueConversion.updatePath(key), try ValueConversion.node(from: value)))
        }
        return children
    }

    private func write(completion: (((any Error)?, DatabaseReference) -> Void)?, _ makeNode: () throws(DatabaseError) -> Node) {
        let finish = completionAdapter(completion)
        do {
            try database.repo.set(try makeNode(), at: path, completion: finish)
        } catch {
            failed(error, finish)
        }
    }

    /// The internal completion for a user's block (run on the callback queue).
    func completionAdapter(_ block: (((any Error)?, DatabaseReference) -> Void)?) -> WriteCompletion? {
        guard let block else { return nil }
        let box = UncheckedBox(block)
        return { [self] error in box.value(error, self) }
    }

    /// Reports an error found at the call: to the completion block, or the log.
    func failed(_ error: DatabaseError, _ completion: WriteCompletion?) {
        guard let completion else {
            Database.logger.error("Nothing was written at \(path.wireForm): \(error.message)")
            return
        }
        database.repo.complete { completion(error) }
    }

    /// The `async` form of a write: `start` hands the write to the repo with a completion (and
    /// suspends until the repo has taken it), then this waits, suspended, for the server's answer.
    ///
    /// - Throws: what `start` throws (nothing was written), or the server's refusal.
    func awaitWrite(_ start: (Repo, @escaping WriteCompletion) async throws -> Void) async throws -> DatabaseReference {
        let answer = OneShot<Void, DatabaseError>()
        try await start(database.repo) { error in
            if let error { answer.fail(error) } else { answer.succeed() }
        }
        try await answer.value()
        return self
    }

    // MARK: - Paths

    /// Whether `path` is a valid path for ``child(_:)`` / `reference(withPath:)`, with the reason if not.
    ///
    /// - Throws: ``DatabaseError`` with code `invalidArgument`, naming the offending segment.
    public static func validatePath(_ path: String) throws(DatabaseError) {
        _ = try parsedPath(path)
    }

    /// The path, or the reason it is invalid as a ``DatabaseError``.
    static func parsedPath(_ path: String) throws(DatabaseError) -> TreePath {
        do {
            return try TreePath(validating: path)
        } catch {
            throw DatabaseError(.invalidArgument, error.message, underlying: error)
        }
    }

    static func validatedPath(_ path: String) -> TreePath {
        do {
            return try parsedPath(path)
        } catch {
            preconditionFailure(error.message)
        }
    }

    static func validatedRelativePath(_ path: String) -> TreePath {
        let parsed = validatedPath(path)
        precondition(parsed.firstKey != .info || parsed.depth == 0, "\"\(path)\": .info is only valid at the root.")
        return parsed
    }
}
