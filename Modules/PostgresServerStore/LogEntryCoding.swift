import CoreTree
import Foundation
import RealtimeServer

/// A shared log entry as stored in `rtdb_log.entry`: JSON whose data values are JSON text in
/// export format (priorities kept), so each parses with the tree's own parser:
/// `{"w":[{"s":"/a","d":"<json>"},{"u":"/b","c":[["x/y","<json>"]]}],"st":[{"n":"rules","v":"<base64>"}]}`.
enum LogEntryCoding {
    static func encode(writes: [WriteOperation], settings: [SharedSetting]) throws(PostgresStoreError) -> String {
        var writeObjects: [[String: Any]] = []
        for write in writes {
            switch write {
            case .set(let path, let node):
                writeObjects.append(["s": path.wireForm, "d": node.jsonString(format: .export)])
            case .update(let path, let children):
                writeObjects.append(["u": path.wireForm, "c": children.map { [$0.path.relativeForm, $0.node.jsonString(format: .export)] }])
            }
        }
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

    static func decode(_ text: String, sequence: UInt64) throws(PostgresStoreError) -> SharedLogEntry {
        let damaged = PostgresStoreError("Log entry \(sequence) is damaged.")
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { throw damaged }
        var writes: [WriteOperation] = []
        for write in object["w"] as? [[String: Any]] ?? [] {
            do {
                if let path = write["s"] as? String, let data = write["d"] as? String {
                    writes.append(.set(path: TreePath(unchecked: path), node: try Node(jsonString: data)))
                } else if let path = write["u"] as? String, let children = write["c"] as? [[String]] {
                    var parsed: [(path: TreePath, node: Node)] = []
                    for child in children where child.count == 2 {
                        parsed.append((TreePath(unchecked: child[0]), try Node(jsonString: child[1])))
                    }
                    writes.append(.update(path: TreePath(unchecked: path), children: parsed))
                } else {
                    throw damaged
                }
            } catch {
                throw damaged
            }
        }
        var settings: [SharedSetting] = []
        for setting in object["st"] as? [[String: String]] ?? [] {
            guard let name = setting["n"], let value = setting["v"].flatMap({ Data(base64Encoded: $0) }) else { throw damaged }
            settings.append(SharedSetting(name: name, value: Array(value)))
        }
        return SharedLogEntry(sequence: sequence, writes: writes, settings: settings)
    }
}
