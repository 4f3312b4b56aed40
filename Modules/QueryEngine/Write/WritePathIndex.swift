import CoreTree

/// Pending write ids by the path each write was made at, so the writes at, above or below a path
/// are found in time proportional to the path's depth and the number found, not to the number
/// of pending writes.
struct WritePathIndex: Sendable {
    /// The ids of writes made at this branch's own path, oldest first.
    private(set) var ids: [Int64] = []
    private var children: [ChildKey: WritePathIndex] = [:]

    var isEmpty: Bool { ids.isEmpty && children.isEmpty }

    /// Files `id` under `path`.
    mutating func insert(_ id: Int64, at path: TreePath) { insert(id, at: path.keys[...]) }

    private mutating func insert(_ id: Int64, at keys: ArraySlice<ChildKey>) {
        guard let first = keys.first else {
            ids.append(id)
            return
        }
        children[first, default: WritePathIndex()].insert(id, at: keys.dropFirst())
    }

    /// Removes `id` from under `path` (and the branches it leaves empty).
    mutating func remove(_ id: Int64, at path: TreePath) { remove(id, at: path.keys[...]) }

    private mutating func remove(_ id: Int64, at keys: ArraySlice<ChildKey>) {
        guard let first = keys.first else {
            // Ids are filed in increasing order and mostly leave oldest or newest first.
            if ids.last == id {
                ids.removeLast()
            } else if ids.first == id {
                ids.removeFirst()
            } else {
                ids.removeAll { $0 == id }
            }
            return
        }
        guard children[first] != nil else { return }
        children[first]!.remove(id, at: keys.dropFirst())
        if children[first]!.isEmpty { children[first] = nil }
    }

    /// The ids of writes made above `path` (at its ancestors), and the branch filed at `path`
    /// itself (`nil` when no write was made at or below it).
    func lookup(_ path: TreePath) -> (above: [Int64], branch: WritePathIndex?) {
        var above: [Int64] = []
        var node = self
        for key in path.keys {
            above += node.ids
            guard let child = node.children[key] else { return (above, nil) }
            node = child
        }
        return (above, node)
    }

    /// The ids of writes made at `path`, above it, or below it.
    func ids(touching path: TreePath) -> [Int64] {
        var (found, branch) = lookup(path)
        branch?.collect(into: &found)
        return found
    }

    private func collect(into found: inout [Int64]) {
        found += ids
        for child in children.values { child.collect(into: &found) }
    }
}
