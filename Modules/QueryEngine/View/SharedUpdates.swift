import CoreTree

/// Work shared by the views of one location while they apply the same operation.
///
/// The caches of views at one location usually hold the very same nodes: every unfiltered server
/// cache holds the server data, and an event cache without pending writes holds it too. Each view
/// processes the operation on its own, so without sharing, one server update to a child of a large
/// location walks and path-copies the same tree once per cache, and the copies then stop sharing
/// memory. This memo hands a view the result another view already computed from an identical
/// input, so the work is done once and the caches keep sharing one tree.
///
/// Inputs are matched by identity (``Node/isIdentical(to:)``), never by content, so a lookup is
/// O(1) and a miss costs nothing but the work itself. Entries hold their nodes, so an identity
/// cannot be reused while the memo lives. One memo lives for one operation at one location.
final class SharedUpdates {
    /// How many recent results are kept: an operation touches a handful of children per view.
    private static let capacity = 16

    private struct ChildLookup {
        let base: Node
        let key: ChildKey
        let result: Node
    }

    private struct ChildUpdate {
        let base: Node
        let key: ChildKey
        let child: Node
        let result: Node
    }

    private struct PathUpdate {
        let base: Node
        let path: TreePath
        let value: Node
        let result: Node
    }

    private struct OrderUpdate {
        let base: SortedMap<IndexKey, Node>
        let index: QueryIndex
        let name: ChildKey
        let oldChild: Node
        let newChild: Node
        let result: SortedMap<IndexKey, Node>
    }

    private var lookups: [ChildLookup] = []
    private var childUpdates: [ChildUpdate] = []
    private var pathUpdates: [PathUpdate] = []
    private var orderUpdates: [OrderUpdate] = []

    /// `base.immediateChild(key)`.
    func immediateChild(of base: Node, _ key: ChildKey) -> Node {
        if let hit = lookups.last(where: { $0.base.isIdentical(to: base) && $0.key == key }) { return hit.result }
        let result = base.immediateChild(key)
        SharedUpdates.remember(ChildLookup(base: base, key: key, result: result), in: &lookups)
        return result
    }

    /// `base.updatingImmediateChild(key, to: child)`.
    func updatingImmediateChild(of base: Node, _ key: ChildKey, to child: Node) -> Node {
        if let hit = childUpdates.last(where: {
            $0.base.isIdentical(to: base) && $0.key == key && $0.child.isIdentical(to: child)
        }) {
            return hit.result
        }
        let result = base.updatingImmediateChild(key, to: child)
        SharedUpdates.remember(ChildUpdate(base: base, key: key, child: child, result: result), in: &childUpdates)
        return result
    }

    /// `base.updatingChild(at: path, to: value)`.
    func updatingChild(of base: Node, at path: TreePath, to value: Node) -> Node {
        if path.isRoot { return value }
        if let hit = pathUpdates.last(where: {
            $0.base.isIdentical(to: base) && $0.path == path && $0.value.isIdentical(to: value)
        }) {
            return hit.result
        }
        let result = base.updatingChild(at: path, to: value)
        SharedUpdates.remember(PathUpdate(base: base, path: path, value: value, result: result), in: &pathUpdates)
        return result
    }

    /// The index-ordered children `base` with the child `name` moved from `oldChild` to `newChild`
    /// (either may be empty), as `update` computes it.
    func updatingOrder(
        _ base: SortedMap<IndexKey, Node>, index: QueryIndex, name: ChildKey, from oldChild: Node, to newChild: Node,
        _ update: () -> SortedMap<IndexKey, Node>
    ) -> SortedMap<IndexKey, Node> {
        if let hit = orderUpdates.last(where: {
            $0.base.isIdentical(to: base) && $0.index == index && $0.name == name
                && $0.oldChild.isIdentical(to: oldChild) && $0.newChild.isIdentical(to: newChild)
        }) {
            return hit.result
        }
        let result = update()
        SharedUpdates.remember(
            OrderUpdate(base: base, index: index, name: name, oldChild: oldChild, newChild: newChild, result: result),
            in: &orderUpdates)
        return result
    }

    private static func remember<Entry>(_ entry: Entry, in entries: inout [Entry]) {
        if entries.count == capacity { entries.removeFirst() }
        entries.append(entry)
    }
}
