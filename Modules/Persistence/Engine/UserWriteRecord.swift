public import CoreTree

/// A user write waiting for the server, as kept in the queue: a set, an update, or a named
/// transaction (its handler's name and arguments; the handler runs again after a restart).
///
/// Server values (`{".sv": …}`) are kept unresolved: they are resolved when the write is sent.
public struct UserWriteRecord: Sendable, Equatable {
    /// What the write does.
    public enum Kind: Sendable, Equatable {
        /// Replaces the data at the path (a set).
        case overwrite(Node)
        /// Replaces the data at several paths below the path (an update); empty nodes delete.
        case merge([UpdateChild])
        /// Runs the transaction handler registered under `name` with `arguments` at the path.
        /// Names hold no control characters.
        case transaction(name: String, arguments: Node)
    }

    /// One path of a merge, relative to the write's path.
    public struct UpdateChild: Sendable, Equatable {
        /// The relative path.
        public var path: TreePath
        /// The new data there (empty deletes).
        public var node: Node

        /// A merge entry.
        public init(path: TreePath, node: Node) {
            self.path = path
            self.node = node
        }
    }

    /// The write's id; ids increase in the order writes were made.
    public var writeId: Int64
    /// Where the write applies.
    public var path: TreePath
    /// The data.
    public var kind: Kind

    /// A queued write.
    public init(writeId: Int64, path: TreePath, kind: Kind) {
        self.writeId = writeId
        self.path = path
        self.kind = kind
    }

    // Encoding: a line with `S` (set), `M` (merge) or `T` (transaction), a line with the path,
    // then for a set the node's JSON, for a merge one line per child: relative path, tab, JSON,
    // for a transaction a line with the name and one with the arguments' JSON. Firebase keys and
    // transaction names cannot hold control characters and the JSON writer escapes them, so the
    // separators are unambiguous.

    /// The bytes stored for the record.
    package func encoded() -> [UInt8] {
        var text: String
        switch kind {
        case .overwrite(let node):
            text = "S\n\(path.wireForm)\n\(node.jsonString(format: .export))"
        case .merge(let children):
            text = "M\n\(path.wireForm)"
            for child in children { text += "\n\(child.path.relativeForm)\t\(child.node.jsonString(format: .export))" }
        case .transaction(let name, let arguments):
            text = "T\n\(path.wireForm)\n\(name)\n\(arguments.jsonString(format: .export))"
        }
        return Array(text.utf8)
    }

    /// The record stored as `bytes` under `writeId`.
    ///
    /// - Throws: ``StorageError`` `invalidRecord` when the bytes are not a record.
    package static func decode(writeId: Int64, _ bytes: [UInt8]) throws -> UserWriteRecord {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        func invalid(_ why: String, underlying: (any Error)? = nil) -> StorageError {
            StorageError(
                .invalidRecord,
                "queued write \(writeId) is unreadable (\(why)), so it cannot be sent; reopening the store with StoreRecovery moves it aside and keeps every readable queued write.",
                underlying: underlying)
        }
        guard lines.count >= 2, let tag = lines[0].first, lines[0].count == 1 else { throw invalid("no header") }
        let path = TreePath(unchecked: String(decoding: lines[1], as: UTF8.self))
        do {
            switch tag {
            case UInt8(ascii: "S"):
                guard lines.count == 3 else { throw invalid("a set has one value") }
                return UserWriteRecord(writeId: writeId, path: path, kind: .overwrite(try Node(json: lines[2])))
            case UInt8(ascii: "M"):
                var children: [UpdateChild] = []
                for line in lines.dropFirst(2) {
                    guard let tab = line.firstIndex(of: UInt8(ascii: "\t")) else { throw invalid("a merge line has no tab") }
                    let relative = TreePath(unchecked: String(decoding: line[line.startIndex..<tab], as: UTF8.self))
                    children.append(UpdateChild(path: relative, node: try Node(json: line[(tab + 1)...])))
                }
                return UserWriteRecord(writeId: writeId, path: path, kind: .merge(children))
            case UInt8(ascii: "T"):
                guard lines.count == 4 else { throw invalid("a transaction has a name and arguments") }
                let name = String(decoding: lines[2], as: UTF8.self)
                return UserWriteRecord(writeId: writeId, path: path, kind: .transaction(name: name, arguments: try Node(json: lines[3])))
            default:
                throw invalid("unknown kind")
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw invalid("a value is not valid JSON", underlying: error)
        }
    }
}
