import CoreTree
import Testing
@testable import Persistence

/// A large group of writes is made into rows on two threads: the batch must be the one a single
/// thread makes, sealed or not.
@Suite("Storage engine: a large group's rows")
struct ReplacingRowsTests {
    /// `count` rooms of `messages` messages each, some with priorities and long keys.
    private static func rooms(_ count: Int, messages: Int) -> [(path: TreePath, node: Node)] {
        (0..<count).map { room in
            let children = (0..<messages).map { message -> (key: ChildKey, value: Node) in
                let text = Node(.string("message \(message) of room \(room)"))
                let fields: [(key: ChildKey, value: Node)] = [("text", text), ("ts", Node(.number(Double(message))))]
                return (ChildKey("m\(message)"), Node(children: fields, priority: message % 7 == 0 ? .number(Double(message)) : nil))
            }
            return (TreePath(unchecked: "rooms/r\(room)"), Node(children: children, priority: room % 2 == 0 ? .string("p\(room)") : nil))
        }
    }

    @Test("two threads make the batch one thread makes, in order, sealed or not", arguments: [false, true])
    func sameBatch(sealed: Bool) {
        let writes = Self.rooms(7, messages: 500)
        #expect(writes.reduce(0) { $0 + $1.node.childCount + 1 } >= StorageEngine.parallelRowsThreshold)
        var together = WriteBatch()
        StorageEngine.addReplacingRows(writes, to: &together, sealed: sealed)
        var oneByOne = WriteBatch()
        for write in writes { StorageEngine.addReplacingRows([write], to: &oneByOne, sealed: sealed) }
        #expect(together.operations.count == oneByOne.operations.count)
        // The index of the first difference, not the batches: they hold thousands of rows.
        let difference = together.operations.indices.first { index in
            index >= oneByOne.operations.count || together.operations[index] != oneByOne.operations[index]
        }
        #expect(difference == nil)
    }

    @Test("sealed rows are the plain rows with their checksums")
    func sealedRows() throws {
        let writes = Self.rooms(5, messages: 600)
        var plain = WriteBatch()
        StorageEngine.addReplacingRows(writes, to: &plain, sealed: false)
        var sealed = WriteBatch()
        StorageEngine.addReplacingRows(writes, to: &sealed, sealed: true)
        #expect(plain.operations.count == sealed.operations.count)
        for (plainRow, sealedRow) in zip(plain.operations, sealed.operations) {
            switch (plainRow, sealedRow) {
            case (.put(let key, let value), .put(let sealedKey, let sealedValue)):
                #expect(key == sealedKey)
                #expect(try ChecksummedStore.open(key: key, sealed: sealedValue) == value)
            default:
                #expect(plainRow == sealedRow)
            }
        }
    }
}
