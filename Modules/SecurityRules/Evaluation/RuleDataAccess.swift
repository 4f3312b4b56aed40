public import CoreTree

/// The locations whose data an evaluation of the rules looked at, for a caller that holds only
/// part of the data: when one was not in memory, it loads it and evaluates again (the rules are
/// deterministic, so the second answer is the right one).
///
/// A location is recorded when a rule reads its data (`val()`, `exists()`, `hasChild()`, a
/// priority, a type test) or asks whether the new data is empty there on the way to a write;
/// building a snapshot (`child()`, `parent()`) records nothing.
public final class RuleDataAccess {
    /// Locations read in the data before the operation (`root`, `data`).
    public private(set) var before: Set<TreePath> = []
    /// Locations read in the data after a write (`newData`).
    public private(set) var after: Set<TreePath> = []

    /// An empty record.
    public init() {}

    func note(_ path: TreePath, isNew: Bool) {
        if isNew { after.insert(path) } else { before.insert(path) }
    }
}
