import CoreTree

/// Listens that load all the data at their location, arranged as a tree by path, so a write finds
/// the listens at and above it by walking its path and those below it by walking one subtree.
struct ListenerTree {
    /// One listen.
    struct Listen {
        let subscriber: any DataSubscriber
        let tag: Int?
    }

    /// A listen's identity: its subscriber and its tag.
    struct ListenKey: Hashable {
        let subscriber: ObjectIdentifier
        let tag: Int?
    }

    private final class Level {
        var listens: [ListenKey: Listen] = [:]
        var children: [ChildKey: Level] = [:]
        var isEmpty: Bool { listens.isEmpty && children.isEmpty }
    }

    private var root = Level()
    private(set) var count = 0

    /// Adds a listen at `path` (replacing the subscriber's listen with the same tag there).
    mutating func add(_ listen: Listen, at path: TreePath) {
        var level = root
        for key in path.keys {
            if let next = level.children[key] {
                level = next
            } else {
                let next = Level()
                level.children[key] = next
                level = next
            }
        }
        let key = ListenKey(subscriber: ObjectIdentifier(listen.subscriber), tag: listen.tag)
        if level.listens.updateValue(listen, forKey: key) == nil { count += 1 }
    }

    /// Removes a listen; returns whether it was there.
    @discardableResult
    mutating func remove(subscriber: any DataSubscriber, tag: Int?, at path: TreePath) -> Bool {
        var trail: [Level] = [root]
        for key in path.keys {
            guard let next = trail.last!.children[key] else { return false }
            trail.append(next)
        }
        let removed = trail.last!.listens.removeValue(forKey: ListenKey(subscriber: ObjectIdentifier(subscriber), tag: tag)) != nil
        if removed { count -= 1 }
        // Drop levels left empty, deepest first.
        for depth in stride(from: path.depth, to: 0, by: -1) where trail[depth].isEmpty {
            trail[depth - 1].children[path.keys[depth - 1]] = nil
        }
        return removed
    }

    /// Calls `body` with each listen at or above `path` and its location.
    func forEachListen(atOrAbove path: TreePath, _ body: (TreePath, Listen) -> Void) {
        var level = root
        var keys: [ChildKey] = []
        for listen in level.listens.values { body(.root, listen) }
        for key in path.keys {
            guard let next = level.children[key] else { return }
            level = next
            keys.append(key)
            if !level.listens.isEmpty {
                let location = TreePath(keys: keys)
                for listen in level.listens.values { body(location, listen) }
            }
        }
    }

    /// Calls `body` with each listen strictly below `path` and its location.
    func forEachListen(below path: TreePath, _ body: (TreePath, Listen) -> Void) {
        var level = root
        for key in path.keys {
            guard let next = level.children[key] else { return }
            level = next
        }
        ListenerTree.visit(level, at: path, includeSelf: false, body)
    }

    private static func visit(_ level: Level, at path: TreePath, includeSelf: Bool, _ body: (TreePath, Listen) -> Void) {
        if includeSelf {
            for listen in level.listens.values { body(path, listen) }
        }
        for (key, child) in level.children {
            visit(child, at: path.child(key), includeSelf: true, body)
        }
    }
}
