package import CoreTree

/// The parts of a namespace held in memory, for a namespace whose store holds the whole of it:
/// complete subtrees (entries), kept current as writes apply, under a byte budget.
///
/// - **Entries are complete subtrees.** An entry at a path holds all the data there; a path is
///   *resident* when an entry lies at it or above it, and only resident data is ever answered
///   from memory. No entry lies inside another: loading a path inside an entry changes nothing,
///   loading a path above entries absorbs them.
/// - **Writes apply where data is resident**, and nowhere else: a write inside an entry edits it;
///   a write above entries replaces their data with its own; a write elsewhere touches no memory.
/// - **Loads see every write.** A store read reflects the commits up to some version; the writes
///   this tree applied after that version (kept in ``history`` until ``trimHistory(through:)``)
///   are replayed onto the loaded data before it becomes an entry. Replaying a write the read
///   already saw is harmless: each write sets its path to a value.
/// - **Holds pin data.** A held path (a listener's location) stays resident; eviction takes the
///   least recently used entries first, and from an entry that contains held paths it drops only
///   what lies outside them.
package struct ResidentTree: Sendable {
    /// One entry's bookkeeping (its data lives in ``data``).
    struct Entry: Sendable {
        var bytes: Int
        var lastUse: UInt64
    }

    /// Every entry's data in place, with the containers between (a container's other children are
    /// not resident).
    private(set) var data = Node.empty
    private var entries: [TreePath: Entry] = [:]
    /// For each path, how many entries lie strictly below it: a write or load finds the entries
    /// it replaces without looking through all of them (each write used to cost a scan of every
    /// entry: 0.09x the writes/s of the all-in-memory server with thousands of written paths).
    private var entriesBelow: [TreePath: Int] = [:]
    private var holds: [TreePath: Int] = [:]
    private var tick: UInt64 = 0
    /// The writes applied, with their versions, not yet trimmed.
    private(set) var history: [(version: UInt64, write: StoreWrite)] = []
    /// The bytes the budget allows (see ``evict()``).
    package let budget: Int
    /// The estimated bytes of every entry.
    package private(set) var bytes = 0

    /// An empty tree with a budget of `budget` bytes.
    package init(budget: Int) { self.budget = budget }

    /// The number of entries.
    package var entryCount: Int { entries.count }

    /// The bytes of the entries that lie at or below a held path, or contain one.
    package var heldBytes: Int {
        var held = Set<TreePath>()
        // Entries at or below a held path: one of their ancestors (or they) is held.
        for path in entries.keys {
            var candidate: TreePath? = path
            while let current = candidate {
                if holds[current] != nil {
                    held.insert(path)
                    break
                }
                candidate = current.parent
            }
        }
        // Entries containing a held path.
        for path in holds.keys { if let owner = entry(covering: path) { held.insert(owner) } }
        return held.reduce(0) { $0 + (entries[$1]?.bytes ?? 0) }
    }

    /// The held paths, outermost only (none lies inside another).
    package var outermostHeldPaths: [TreePath] {
        holds.keys.filter { path in !holds.keys.contains { $0 != path && $0.contains(path) } }
    }

    /// Whether a write kept in ``history`` lies at, above or below `path`.
    package func historyTouches(_ path: TreePath) -> Bool {
        history.contains { $0.write.path.contains(path) || path.contains($0.write.path) }
    }

    /// The children of `path` that kept writes (not yet durable) are in, when every such write
    /// is strictly below `path`; `nil` when one is at or above it (it decides all of `path`).
    package func historyBelow(_ path: TreePath) -> Set<ChildKey>? {
        var keys: Set<ChildKey> = []
        for (_, write) in history {
            if write.path.contains(path) { return nil }
            guard let key = write.path.relative(to: path)?.firstKey else { continue }
            // The location's own priority: answered from the whole location.
            if key.isPriorityKey { return nil }
            keys.insert(key)
        }
        return keys
    }

    /// The entry at or above `path`.
    package func entry(covering path: TreePath) -> TreePath? {
        var candidate: TreePath? = path
        while let current = candidate {
            if entries[current] != nil { return current }
            candidate = current.parent
        }
        return nil
    }

    /// Whether the data at `path` is in memory.
    package func isResident(_ path: TreePath) -> Bool { entry(covering: path) != nil }

    /// The data at `path` when it is resident (marking its entry used), else `nil`.
    package mutating func read(_ path: TreePath) -> Node? {
        guard let owner = entry(covering: path) else { return nil }
        tick += 1
        entries[owner]?.lastUse = tick
        return data.child(at: path)
    }

    /// Adds data read from the store at `path`, as of `stored.version`: the writes applied since
    /// are replayed onto it first. Nothing changes when `path` is resident already.
    package mutating func insert(_ stored: StoredData, at path: TreePath) {
        guard !isResident(path) else { return }
        var node = stored.node
        for (version, write) in history where version > stored.version {
            if let relative = write.path.relative(to: path) {
                node = node.updatingChild(at: relative, to: write.node)
            } else if let relative = path.relative(to: write.path) {
                node = write.node.child(at: relative)
            }
        }
        if entriesBelow[path] != nil {
            for inner in entries.keys where path.contains(inner) {
                bytes -= removeEntry(inner)?.bytes ?? 0
            }
        }
        data = data.updatingChild(at: path, to: node)
        tick += 1
        let size = ResidentTree.estimatedBytes(of: node)
        addEntry(path, Entry(bytes: size, lastUse: tick))
        bytes += size
    }

    /// Applies `write` (made at `version`) to the resident data it touches, and keeps it for
    /// loads that started before it.
    package mutating func apply(_ write: StoreWrite, version: UInt64) {
        history.append((version, write))
        if let owner = entry(covering: write.path) {
            let before = ResidentTree.estimatedBytes(of: data.child(at: write.path))
            data = data.updatingChild(at: write.path, to: write.node)
            let change = ResidentTree.estimatedBytes(of: write.node) - before
            entries[owner]?.bytes += change
            bytes += change
            return
        }
        guard entriesBelow[write.path] != nil else { return }
        for inner in entries.keys where write.path.contains(inner) {
            let node = write.node.child(at: inner.relative(to: write.path)!)
            let size = ResidentTree.estimatedBytes(of: node)
            bytes += size - entries[inner]!.bytes
            entries[inner]!.bytes = size
            data = data.updatingChild(at: inner, to: node)
        }
    }

    /// Forgets the writes up to `version` (no load still under way started before them).
    package mutating func trimHistory(through version: UInt64) {
        guard let first = history.first, first.version <= version else { return }
        history.removeAll { $0.version <= version }
    }

    /// Gives the writes kept at version `pending` (applied before their commit's version was
    /// known) the version `version` they were committed at.
    package mutating func settleHistory(pending: UInt64, at version: UInt64) {
        for index in history.indices where history[index].version == pending { history[index].version = version }
    }

    /// Goes back to the data, entries and kept writes of `snapshot` (taken before writes that
    /// then failed to commit), keeping today's holds.
    ///
    /// - Returns: the held paths not resident afterwards (held since the snapshot was taken);
    ///   they must be loaded again.
    package mutating func restore(from snapshot: ResidentTree) -> [TreePath] {
        data = snapshot.data
        entries = snapshot.entries
        entriesBelow = snapshot.entriesBelow
        history = snapshot.history
        bytes = snapshot.bytes
        return holds.keys.filter { !isResident($0) }
    }

    /// Forgets every entry and every kept write (after writes were undone, the store alone knows
    /// the data); holds stay, so the held paths can be loaded again.
    package mutating func dropAll() {
        data = .empty
        entries = [:]
        entriesBelow = [:]
        history = []
        bytes = 0
    }

    /// Holds `path` (it must be resident): it stays in memory until released as often.
    package mutating func hold(_ path: TreePath) {
        precondition(isResident(path), "only resident data can be held")
        holds[path, default: 0] += 1
    }

    /// Releases one hold of `path`.
    package mutating func release(_ path: TreePath) {
        guard let count = holds[path] else { return }
        holds[path] = count > 1 ? count - 1 : nil
    }

    /// Whether `path` is held.
    package func isHeld(_ path: TreePath) -> Bool { holds[path] != nil }

    /// Evicts entries, least recently used first, until the entries fit the budget or only held
    /// data is left. An entry containing held paths shrinks to entries at those paths.
    ///
    /// - Returns: the paths no longer resident.
    @discardableResult
    package mutating func evict() -> [TreePath] { evict(downTo: budget) }

    /// Evicts entries, least recently used first, until they take at most `target` bytes or only
    /// held data is left (``evict()`` with another budget: the process's budget less what other
    /// namespaces hold).
    ///
    /// - Returns: the paths no longer resident.
    @discardableResult
    package mutating func evict(downTo target: Int) -> [TreePath] {
        var evicted: [TreePath] = []
        guard bytes > target else { return evicted }
        // Down to a tenth below the target, so the sort below runs once per many turns, not at
        // every turn of a namespace writing past its budget.
        let target = target - target / 10
        // Every held path and its ancestors: an entry not among them holds nothing. (Looking
        // through every hold for every entry made each turn cost entries × holds: 87 s for 1,000
        // watchers over a full budget.)
        var holdsOrAbove = Set<TreePath>()
        for held in holds.keys {
            var candidate: TreePath? = held
            while let current = candidate, holdsOrAbove.insert(current).inserted { candidate = current.parent }
        }
        for (path, _) in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard bytes > target else { break }
            guard let entry = entries[path] else { continue }
            // Held at the entry itself: it stays whole.
            if holds[path] != nil { continue }
            let heldInside = holdsOrAbove.contains(path) ? holds.keys.filter { path.contains($0) } : []
            let kept = heldInside.filter { held in !heldInside.contains { $0 != held && $0.contains(held) } }
            var remaining = Node.empty
            for held in kept { remaining = remaining.updatingChild(at: held.relative(to: path)!, to: data.child(at: held)) }
            data = data.updatingChild(at: path, to: remaining)
            bytes -= entry.bytes
            removeEntry(path)
            for held in kept {
                let size = ResidentTree.estimatedBytes(of: data.child(at: held))
                addEntry(held, Entry(bytes: size, lastUse: entry.lastUse))
                bytes += size
            }
            evicted.append(path)
        }
        return evicted
    }

    /// Adds (or replaces) the entry at `path`.
    private mutating func addEntry(_ path: TreePath, _ entry: Entry) {
        if entries.updateValue(entry, forKey: path) == nil { countAncestors(of: path, by: 1) }
    }

    /// Removes the entry at `path`, returning it.
    @discardableResult
    private mutating func removeEntry(_ path: TreePath) -> Entry? {
        guard let removed = entries.removeValue(forKey: path) else { return nil }
        countAncestors(of: path, by: -1)
        return removed
    }

    private mutating func countAncestors(of path: TreePath, by delta: Int) {
        var ancestor = path.parent
        while let current = ancestor {
            let count = (entriesBelow[current] ?? 0) + delta
            entriesBelow[current] = count == 0 ? nil : count
            ancestor = current.parent
        }
    }

    /// Roughly the bytes `node` takes in memory: a fixed cost per node and per child, plus its
    /// strings and keys.
    package static func estimatedBytes(of node: Node) -> Int {
        if node.isEmpty { return 0 }
        if let value = node.leafValue {
            if case .string(let text) = value { return 48 + text.utf8.count }
            return 48
        }
        var total = 64
        for (key, child) in node.children { total += 32 + key.stringValue.utf8.count + estimatedBytes(of: child) }
        return total
    }
}
