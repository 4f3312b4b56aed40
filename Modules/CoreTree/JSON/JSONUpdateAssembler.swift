/// Collects the items of an update reader (``JSONStreamReader/update(subtreeBytes:maxValueBytes:)``)
/// into the update's members: each path as written and the data to put there (empty for `null`).
///
/// ```swift
/// var reader = JSONStreamReader.update()
/// var update = JSONUpdateAssembler()
/// for chunk in chunks { update.add(try reader.read(chunk)) }
/// update.add(try reader.finish())
/// let members = update.members   // [(name: "rooms/a", node: ...), ...]
/// ```
public struct JSONUpdateAssembler: Sendable {
    private var names: [String] = []
    private var values: [String: Node] = [:]

    /// An assembler with no members yet.
    public init() {}

    /// Adds items in the order the reader gave them.
    public mutating func add(_ items: [JSONStreamItem]) {
        for item in items { add(item) }
    }

    /// Adds one item.
    public mutating func add(_ item: JSONStreamItem) {
        guard let name = item.path.firstKey?.stringValue else { return }
        if item.path.depth == 1 {
            if values.updateValue(item.node, forKey: name) == nil { names.append(name) }
        } else {
            JSONStreamItem(path: item.path.droppingFirst, node: item.node).apply(to: &values[name, default: .empty])
        }
    }

    /// The members in the order their names first appeared; a name given twice has its last value.
    public var members: [(name: String, node: Node)] {
        names.map { ($0, values[$0] ?? .empty) }
    }
}
