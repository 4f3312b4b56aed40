#if SwiftCrypto
import Crypto
#endif
import Foundation

extension Node {
    /// The node's hash as the Firebase clients and servers compute it for compare-and-set and for
    /// the `h` field of listens: base64 of the SHA-1 of a canonical text form; `""` for the empty node.
    ///
    /// The text of a leaf is an optional `priority:<p>:` prefix, then `number:<16 hex digits of the
    /// big-endian IEEE-754 double>`, `string:<value>` or `boolean:<true|false>`. The text of a
    /// children node is the optional priority prefix, then `:<key>:<child hash>` for every child
    /// with a non-empty hash, in priority order (priority, then key).
    ///
    /// - Complexity: O(n) over the whole subtree (O(n log n) where children carry priorities).
    public var hash: String {
        let text = hashText
        if text.isEmpty { return "" }
        #if SwiftCrypto
        let digest = Array(Insecure.SHA1.hash(data: Array(text.utf8)))
        #else
        let digest = SHA1.digest(Array(text.utf8))
        #endif
        return Data(digest).base64EncodedString()
    }

    /// The canonical text the hash is taken over; `""` for the empty node.
    var hashText: String {
        var text = ""
        if let priority {
            text += "priority:" + Node.priorityHashText(priority) + ":"
        }
        switch leafValue {
        case .bool(let value)?:
            return text + "boolean:" + (value ? "true" : "false")
        case .number(let number)?:
            return text + "number:" + Node.ieee754Hex(number)
        case .string(let string)?:
            return text + "string:" + string
        case nil:
            break
        }
        if isEmpty { return "" }
        for (key, child) in childrenInPriorityOrder {
            let childHash = child.hash
            if !childHash.isEmpty {
                text += ":" + key.stringValue + ":" + childHash
            }
        }
        return text
    }

    /// The children ordered by priority, then key: the order of the priority index.
    public var childrenInPriorityOrder: [(key: ChildKey, value: Node)] {
        let children = Array(self.children)
        guard children.contains(where: { $0.value.priority != nil }) else { return children }
        return children.sorted { a, b in
            let order = Priority.compare(a.value.priority, b.value.priority)
            return order != 0 ? order < 0 : ChildKey.compare(a.key, b.key) < 0
        }
    }

    static func priorityHashText(_ priority: Priority) -> String {
        switch priority {
        case .number(let number): "number:" + ieee754Hex(number)
        case .string(let string): "string:" + string
        }
    }

    /// The 16 lowercase hex digits of the big-endian IEEE-754 encoding of `number`.
    static func ieee754Hex(_ number: Double) -> String {
        let hex = String(number.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
