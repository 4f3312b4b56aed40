import CoreTree
import Persistence

/// Turns the embedded store's rows, read in key order, into the namespace's JSON in export
/// format (priorities as `.priority`, a leaf with one as `{".value": ..., ".priority": ...}`),
/// without ever holding more than one row and the path to it.
///
/// In key order every subtree's rows are contiguous (a path's rows share its key as a prefix),
/// so each object is opened once, filled and closed; members come in the rows' byte order,
/// which JSON does not care about. A leaf row's value is already its JSON and is copied as it
/// is; a leaf's priority row follows it directly; an overflow row (descendants whose paths are
/// too long for their own rows) is decoded and written as members of its object.
///
/// Stores of another layout (PostgreSQL's) hand it members instead:
/// ``add(member:json:)``, in an order that keeps every subtree's members together.
package struct ExportJSONWriter {
    /// Where the JSON goes.
    private var output: ExportOutput
    /// The keys of the objects open below the root, outermost first.
    private var openKeys: [[UInt8]] = []
    /// For the root object and each open object: whether a member was written in it.
    private var hasMembers: [Bool] = []
    /// A leaf row held until the next row shows whether a priority row belongs to it.
    private var pendingLeaf: (keys: [ArraySlice<UInt8>], value: [UInt8])?
    /// Whether the document is a lone leaf (a root leaf row), already written.
    private var wroteRootValue = false

    /// Rows read so far.
    package private(set) var rows = 0

    /// A writer of a whole document to `output`.
    package init(output: ExportOutput) { self.output = output }

    private static let priorityKey = Array(".priority".utf8)

    /// Adds the cache row `key` with `value` (verified); rows must come in key order.
    ///
    /// - Throws: what the output throws; a ``Persistence/StorageError`` for an overflow row that
    ///   does not hold a tree.
    package mutating func add(key: [UInt8], value: [UInt8]) throws {
        guard let place = StorageEngine.cacheRowPlace(key) else { return }
        rows += 1
        if place.isOverflow {
            try flushPendingLeaf()
            let subtree = try StorageEngine.overflowRowSubtree(value)
            for (childKey, child) in subtree.children {
                try member(at: place.keys + [Array(childKey.stringValue.utf8)[...]], child.jsonBytes(format: .export))
            }
            if let priority = subtree.priority {
                try member(at: place.keys + [ExportJSONWriter.priorityKey[...]], priority.node.jsonBytes())
            }
        } else if place.keys.last.map({ $0.elementsEqual(ExportJSONWriter.priorityKey) }) == true {
            let parent = Array(place.keys.dropLast())
            if let leaf = pendingLeaf, leaf.keys.elementsEqual(parent, by: { $0.elementsEqual($1) }) {
                pendingLeaf = nil
                var wrapped = Array(#"{".value":"#.utf8)
                wrapped += leaf.value
                wrapped += Array(#",".priority":"#.utf8)
                wrapped += value
                wrapped.append(UInt8(ascii: "}"))
                try member(at: parent, wrapped)
            } else {
                try flushPendingLeaf()
                try member(at: place.keys, value)
            }
        } else {
            try flushPendingLeaf()
            pendingLeaf = (place.keys, value)
        }
    }

    /// Adds the member at the path `keys` (the whole document when empty) with `json` as its
    /// value, already JSON (a leaf in export format, or a `.priority` member's value).
    ///
    /// The members of a subtree must come together (no member outside it between two inside).
    ///
    /// - Throws: what the output throws.
    package mutating func add(member keys: [ArraySlice<UInt8>], json: [UInt8]) throws {
        rows += 1
        try flushPendingLeaf()
        try member(at: keys, json)
    }

    /// Closes every open object and writes what is left (`null` for an empty namespace).
    package mutating func finish() throws {
        try flushPendingLeaf()
        if hasMembers.isEmpty {
            if !wroteRootValue { try output.write(Array("null".utf8)) }
        } else {
            try output.write([UInt8](repeating: UInt8(ascii: "}"), count: hasMembers.count))
            openKeys = []
            hasMembers = []
        }
        try output.write([UInt8(ascii: "\n")])
        try output.flush()
    }

    private mutating func flushPendingLeaf() throws {
        guard let leaf = pendingLeaf else { return }
        pendingLeaf = nil
        try member(at: leaf.keys, leaf.value)
    }

    /// Writes `value` (JSON) at `keys`: the whole document at the root, else a member of its
    /// parent object, opening and closing objects on the way there.
    private mutating func member(at keys: [ArraySlice<UInt8>], _ value: [UInt8]) throws {
        guard let last = keys.last else {
            try output.write(value)
            wroteRootValue = true
            return
        }
        try move(to: keys.dropLast())
        try name(last)
        try output.write(value)
    }

    /// Writes the name of a member of the innermost open object (and the comma before it).
    private mutating func name(_ key: ArraySlice<UInt8>) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.count + 4)
        if hasMembers[hasMembers.count - 1] { bytes.append(UInt8(ascii: ",")) }
        hasMembers[hasMembers.count - 1] = true
        ExportJSONWriter.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        try output.write(bytes)
    }

    /// Leaves the open objects until the innermost one lies on `keys`' path, then opens the
    /// objects of the rest of it.
    private mutating func move(to keys: ArraySlice<ArraySlice<UInt8>>) throws {
        if hasMembers.isEmpty {
            try output.write([UInt8(ascii: "{")])
            hasMembers = [false]
        }
        var common = 0
        for (open, key) in zip(openKeys, keys) {
            guard open.elementsEqual(key) else { break }
            common += 1
        }
        if openKeys.count > common {
            try output.write([UInt8](repeating: UInt8(ascii: "}"), count: openKeys.count - common))
            openKeys.removeLast(openKeys.count - common)
            hasMembers.removeLast(hasMembers.count - 1 - common)
        }
        for key in keys.dropFirst(common) {
            try name(key)
            try output.write([UInt8(ascii: "{")])
            openKeys.append(Array(key))
            hasMembers.append(false)
        }
    }

    /// `key` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendQuoted(_ key: ArraySlice<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in key {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += Array("\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
