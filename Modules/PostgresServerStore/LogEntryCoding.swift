import CoreTree
import Foundation
import ServerCore

/// A shared log entry as stored in `rtdb_log.entry`: JSON whose data values are JSON text in
/// export format (priorities kept), so each parses with the tree's own parser:
/// `{"w":[{"s":"/a","d":"<json>"},{"u":"/b","c":[["x/y","<json>"]]}],"st":[{"n":"rules","v":"<base64>"}]}`.
enum LogEntryCoding {
    static func encode(writes: [WriteOperation], settings: [StoreSetting]) throws(PostgresStoreError) -> String {
        let writeObjects = writes.map(writeObject)
        let object: [String: Any] = [
            "w": writeObjects,
            "st": settings.map { ["n": $0.name, "v": Data($0.value).base64EncodedString()] },
        ]
        do {
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        } catch {
            throw PostgresStoreError("A log entry could not be encoded.", underlying: error)
        }
    }

    /// Held onDisconnect writes: `[{"s"|"u": ..., "who": {"admin": true} | {"auth": "<json>"|null}}]`.
    static func encode(held: [HeldWrite]) throws(PostgresStoreError) -> String {
        var objects: [[String: Any]] = []
        for write in held {
            var object = writeObject(write.operation)
            switch write.caller {
            case .admin: object["who"] = ["admin": true]
            case .user(let auth?): object["who"] = ["auth": auth.jsonString(format: .export)]
            case .user(nil): object["who"] = ["auth": NSNull()]
            }
            objects.append(object)
        }
        do {
            return String(decoding: try JSONSerialization.data(withJSONObject: objects), as: UTF8.self)
        } catch {
            throw PostgresStoreError("Held onDisconnect writes could not be encoded.", underlying: error)
        }
    }

    static func decode(held text: String) throws(PostgresStoreError) -> [HeldWrite] {
        let damaged = PostgresStoreError("Held onDisconnect writes are damaged.")
        guard let objects = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] else { throw damaged }
        var held: [HeldWrite] = []
        for object in objects {
            guard let operation = try? operation(from: object), let who = object["who"] as? [String: Any] else { throw damaged }
            let caller: Caller
            if who["admin"] as? Bool == true {
                caller = .admin
            } else if let auth = who["auth"] as? String {
                guard let node = try? Node(jsonString: auth) else { throw damaged }
                caller = .user(auth: node)
            } else {
                caller = .anonymous
            }
            held.append(HeldWrite(operation: operation, caller: caller))
        }
        return held
    }

    private static func writeObject(_ write: WriteOperation) -> [String: Any] {
        switch write {
        case .set(let path, let node):
            ["s": path.wireForm, "d": node.jsonString(format: .export)]
        case .update(let path, let children):
            ["u": path.wireForm, "c": children.map { [$0.path.relativeForm, $0.node.jsonString(format: .export)] }]
        }
    }

    private static func operation(from write: [String: Any]) throws -> WriteOperation {
        if let path = write["s"] as? String, let data = write["d"] as? String {
            return .set(path: TreePath(unchecked: path), node: try Node(jsonString: data))
        }
        if let path = write["u"] as? String, let children = write["c"] as? [[String]] {
            var parsed: [(path: TreePath, node: Node)] = []
            for child in children where child.count == 2 {
                parsed.append((TreePath(unchecked: child[0]), try Node(jsonString: child[1])))
            }
            return .update(path: TreePath(unchecked: path), children: parsed)
        }
        throw PostgresStoreError("not a write")
    }

    static func decode(_ text: String, sequence: UInt64) throws(PostgresStoreError) -> SharedLogEntry {
        let damaged = PostgresStoreError("Log entry \(sequence) is damaged.")
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { throw damaged }
        var writes: [WriteOperation] = []
        for write in object["w"] as? [[String: Any]] ?? [] {
            guard let operation = try? operation(from: write) else { throw damaged }
            writes.append(operation)
        }
        var settings: [StoreSetting] = []
        for setting in object["st"] as? [[String: String]] ?? [] {
            guard let name = setting["n"], let value = setting["v"].flatMap({ Data(base64Encoded: $0) }) else { throw damaged }
            settings.append(StoreSetting(name: name, value: Array(value)))
        }
        return SharedLogEntry(sequence: sequence, writes: writes, settings: settings)
    }
}
