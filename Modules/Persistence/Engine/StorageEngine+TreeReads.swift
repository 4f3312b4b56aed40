package import CoreTree

/// Reading trees back from the engine's rows: the client's cache and the server's embedded store
/// share the layout (``StorageKeys``), so they share these reads.
extension StorageEngine {
    /// The tree stored at `path` in `store` (sealed), leaf and overflow rows alike.
    package static func readTree(at path: TreePath, from store: any OrderedKeyValueStore) throws -> Node {
        try readTree(at: path, from: store, limit: .max) ?? .empty
    }

    /// The tree stored at `path` in `store`, or `nil` when its rows add up to more than `limit`
    /// bytes (the reading stops there: nothing larger is built).
    package static func readTree(at path: TreePath, from store: any OrderedKeyValueStore, limit: Int) throws -> Node? {
        guard StorageKeys.fits(path) else {
            let ancestor = StorageKeys.deepestFittingAncestor(path)
            if let leaf = try leafAbove(path, limitedTo: ancestor.depth + 1, in: store) { return leaf }
            guard let row = try store.get(StorageKeys.overflowKey(ancestor)) else { return .empty }
            guard row.count <= limit else { return nil }
            return try CacheRows.decode(row).child(at: path.relative(to: ancestor)!)
        }
        if let leaf = try leafAbove(path, limitedTo: path.depth, in: store) { return leaf }
        let base = StorageKeys.cacheKey(path)
        var builder = CacheRows.Builder()
        var total = 0
        var tooLarge = false
        try store.scan(KeyRange(prefix: base), reverse: false) { key, value in
            total += key.count - base.count + value.count
            if total > limit {
                tooLarge = true
                return false
            }
            let (relative, isOverflow) = StorageKeys.relativeCachePath(key, below: base)
            if isOverflow {
                builder.addSubtree(try CacheRows.decode(value), at: relative)
            } else {
                builder.addLeaf(try CacheRows.decode(value), at: relative)
            }
            return true
        }
        return tooLarge ? nil : builder.build()
    }

    /// The data at `path` when one of its first `depth` ancestors is stored as a leaf (nothing
    /// lies below a leaf: the empty node); `nil` when none is.
    private static func leafAbove(_ path: TreePath, limitedTo depth: Int, in store: any OrderedKeyValueStore) throws -> Node? {
        for level in 0..<min(depth, path.depth) {
            let ancestor = TreePath(keys: Array(path.keys.prefix(level)))
            if let row = try store.get(StorageKeys.cacheKey(ancestor)) {
                return try CacheRows.decode(row).child(at: path.relative(to: ancestor)!)
            }
        }
        return nil
    }

    /// The children of `path` one level deep: its own value when it is a leaf, else each child's
    /// key with its value when the child is a leaf (`nil` for a child with children). `nil` when
    /// the answer would exceed `limit` bytes.
    ///
    /// Each child costs one seek: the scan stops at the child's first row and the next starts
    /// after the child's key range, so children with large subtrees cost no more than leaves.
    package static func readShallow(at path: TreePath, from store: any OrderedKeyValueStore, limit: Int)
        throws -> (leaf: Node?, children: [ChildKey: Node?])? {
        guard StorageKeys.fits(path) else {
            guard let node = try readTree(at: path, from: store, limit: limit) else { return nil }
            return shallow(of: node)
        }
        if let leaf = try leafAbove(path, limitedTo: path.depth, in: store) { return shallow(of: leaf) }
        let base = StorageKeys.cacheKey(path)
        let priorityKey = StorageKeys.cacheKey(path.child(.priority))
        var children: [ChildKey: Node?] = [:]
        var total = 0
        var start = base
        let end = KeyRange(prefix: base).upperBound
        while true {
            var found: (key: [UInt8], value: [UInt8])?
            try store.scan(KeyRange(from: start, to: end), reverse: false) { key, value in
                found = (key, value)
                return false
            }
            guard let (key, value) = found else { break }
            if key == base {
                // The location itself is a leaf.
                return (try CacheRows.decode(value), [:])
            }
            if key.count == base.count + 1, key.last == StorageKeys.overflowMarker {
                // Children whose keys are too long live in one row.
                for (childKey, child) in try CacheRows.decode(value).children {
                    children[childKey] = child.isLeaf ? child.withPriority(nil) : Optional<Node>.none
                }
                start = key + [0]
                continue
            }
            let rest = key[base.count...]
            let nameEnd = rest.firstIndex(of: StorageKeys.separator) ?? rest.endIndex
            let childPrefix = Array(key[..<nameEnd]) + [StorageKeys.separator]
            if childPrefix != priorityKey {
                let name = ChildKey(String(decoding: key[base.count..<nameEnd], as: UTF8.self))
                let isLeaf = key == childPrefix
                let leafValue = isLeaf ? try CacheRows.decode(value) : nil
                total += name.stringValue.utf8.count + (isLeaf ? value.count : 4) + 2
                if total > limit { return nil }
                children[name] = leafValue
            }
            guard let next = KeyRange(prefix: childPrefix).upperBound else { break }
            start = next
        }
        return (nil, children)
    }

    private static func shallow(of node: Node) -> (leaf: Node?, children: [ChildKey: Node?]) {
        if node.isLeaf { return (node.withPriority(nil), [:]) }
        var children: [ChildKey: Node?] = [:]
        for (key, child) in node.children { children[key] = child.isLeaf ? child.withPriority(nil) : Optional<Node>.none }
        return (nil, children)
    }
}
