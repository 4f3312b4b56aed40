public import CoreTree
public import Foundation

/// The data a transaction block reads and changes (Firebase's `MutableData`).
///
/// Children obtained with ``childData(byAppendingPath:)`` write through to the same transaction.
public final class MutableData: NSObject, @unchecked Sendable {
    // Only touched by the transaction block, on one thread at a time.
    final class Holder {
        var node: Node
        /// The first invalid value assigned, reported as the transaction's error.
        var invalidValue: DatabaseError?
        init(_ node: Node) { self.node = node }
    }

    let holder: Holder
    let path: TreePath

    init(node: Node) {
        holder = Holder(node)
        path = .root
    }

    private init(holder: Holder, path: TreePath) {
        self.holder = holder
        self.path = path
    }

    /// The data at this location, as a node.
    public var node: Node { holder.node.child(at: path) }

    /// The data as Foundation values (`nil` when there is none). Set it to change the data;
    /// an unsupported value is reported when the transaction's result is applied.
    public var value: Any? {
        get {
            let current = node
            return current.isEmpty ? nil : current.foundationValue()
        }
        set {
            do {
                let newNode = try ValueConversion.node(from: newValue).withPriority(node.priority)
                holder.node = holder.node.updatingChild(at: path, to: newNode)
            } catch {
                holder.invalidValue = holder.invalidValue ?? error
            }
        }
    }

    /// The priority: a number, a string or `nil`.
    public var priority: Any? {
        get {
            node.foundationPriority
        }
        set {
            do {
                if let placeholder = try ValueConversion.placeholderPriority(from: newValue) {
                    holder.node = holder.node.updatingChild(at: path, to: CoreTree.ServerValue.carrying(node, priority: placeholder))
                    return
                }
                let newPriority = try ValueConversion.priority(from: newValue)
                holder.node = holder.node.updatingChild(at: path, to: node.withPriority(newPriority))
            } catch {
                holder.invalidValue = holder.invalidValue ?? error
            }
        }
    }

    /// The last segment of this location's path; `nil` at the transaction's root.
    public var key: String? { path.lastKey?.stringValue }

    /// The number of immediate children.
    public var childrenCount: UInt { UInt(node.childCount) }

    /// Whether there are children.
    public func hasChildren() -> Bool { node.childCount > 0 }

    /// Whether there is data at a relative path.
    public func hasChild(atPath path: String) -> Bool {
        !node.child(at: DatabaseReference.validatedRelativePath(path)).isEmpty
    }

    /// The data at a relative path; changes to it write through to this transaction.
    public func childData(byAppendingPath path: String) -> MutableData {
        MutableData(holder: holder, path: self.path.appending(DatabaseReference.validatedRelativePath(path)))
    }

    /// The immediate children as ``MutableData``.
    public var children: NSEnumerator {
        let items = node.children.map { MutableData(holder: holder, path: path.child($0.key)) }
        return (items as NSArray).objectEnumerator()
    }

    /// The data as JSON.
    public override var description: String { "MutableData(\(node.jsonString(format: .plain)))" }
}
