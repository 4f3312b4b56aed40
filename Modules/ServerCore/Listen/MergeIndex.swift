import CoreTree

/// The children of one merge arranged as a tree by path, so the part of the merge at or below
/// any listen location is found by walking that location's keys: the work for all listens
/// together grows with paths plus listeners plus what is delivered, not with their product.
struct MergeIndex {
    /// What a merge means for one location below the merge's path.
    enum Part {
        /// The location is a written child or lies inside one: its data was overwritten.
        case inside
        /// Written children lie below the location: the merge of them, relative to it, in the
        /// order the merge gave them.
        case below([(path: TreePath, node: Node)])
        /// No written child touches the location.
        case untouched
    }

    private final class Level {
        /// The position in the merge of the child written exactly here.
        var written: Int?
        var children: [ChildKey: Level] = [:]
    }

    private let root = Level()
    private let children: [(path: TreePath, node: Node)]

    /// An index of `children`, paths relative to the merge's path.
    init(_ children: [(path: TreePath, node: Node)]) {
        self.children = children
        for (position, child) in children.enumerated() {
            var level = root
            for key in child.path.keys {
                if let next = level.children[key] {
                    level = next
                } else {
                    let next = Level()
                    level.children[key] = next
                    level = next
                }
            }
            level.written = position
        }
    }

    /// What the merge means at `relative` (a location relative to the merge's path).
    func part(at relative: TreePath) -> Part {
        var level = root
        for key in relative.keys {
            if level.written != nil { return .inside }
            guard let next = level.children[key] else { return .untouched }
            level = next
        }
        if level.written != nil { return .inside }
        var found: [(position: Int, path: TreePath)] = []
        MergeIndex.collect(level, keys: [], into: &found)
        guard !found.isEmpty else { return .untouched }
        return .below(found.sorted { $0.position < $1.position }.map { (path: $0.path, node: children[$0.position].node) })
    }

    private static func collect(_ level: Level, keys: [ChildKey], into found: inout [(position: Int, path: TreePath)]) {
        for (key, child) in level.children {
            let path = keys + [key]
            if let position = child.written {
                found.append((position, TreePath(keys: path)))
            } else {
                collect(child, keys: path, into: &found)
            }
        }
    }
}
