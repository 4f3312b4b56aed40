import CoreTree
import Dispatch
import Synchronization

extension StorageEngine {
    /// Children (summed over the writes' top nodes) from which a group's rows are made on two
    /// threads: below it, handing work to a second thread costs more than it saves.
    static let parallelRowsThreshold = 2_048

    /// Adds, for each `(path, node)` in order, the deletion of the path's key range and then the
    /// node's rows (``addRows(of:at:to:delta:sealed:)``). The paths are outermost (none inside
    /// another) and their rows fit.
    ///
    /// A large group (several writes with at least ``parallelRowsThreshold`` children between
    /// them: a REST PATCH of a few megabytes, an import's batch) is split in two halves of about
    /// equal children, each made into rows on its own thread; the halves are appended in order,
    /// so the batch is the same as one thread makes. The calling thread blocks until both are
    /// done, so it must not be a thread of Swift's cooperative pool.
    static func addReplacingRows(_ writes: [(path: TreePath, node: Node)], to batch: inout WriteBatch, sealed: Bool) {
        @Sendable func rows(of part: ArraySlice<(path: TreePath, node: Node)>) -> WriteBatch {
            var rows = WriteBatch()
            for (path, node) in part {
                rows.deleteRange(KeyRange(prefix: StorageKeys.cacheKey(path)))
                var delta = 0
                addRows(of: node, at: path, to: &rows, delta: &delta, sealed: sealed)
            }
            return rows
        }
        let weights = writes.map { $0.node.childCount + 1 }
        let total = weights.reduce(0, +)
        guard writes.count >= 2, total >= parallelRowsThreshold else {
            batch.append(contentsOf: rows(of: writes[...]))
            return
        }
        var split = 1
        var firstHalf = weights[0]
        while split < writes.count - 1, firstHalf + weights[split] <= total / 2 {
            firstHalf += weights[split]
            split += 1
        }
        let halves = [writes[..<split], writes[split...]]
        let made = Mutex<[WriteBatch]>([WriteBatch(), WriteBatch()])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let part = rows(of: halves[index])
            made.withLock { $0[index] = part }
        }
        made.withLock { parts in
            batch.append(contentsOf: parts[0])
            batch.append(contentsOf: parts[1])
        }
    }
}
