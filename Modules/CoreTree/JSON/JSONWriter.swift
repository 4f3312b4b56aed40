/// How a ``Node`` is written as JSON.
public struct JSONFormat: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Write priorities as `.priority` members (and leaves with priority as `{".value", ".priority"}`).
    public static let priorities = JSONFormat(rawValue: 1 << 0)
    /// Write children nodes whose keys are all non-negative integers, with the largest key below
    /// twice the number of children, as JSON arrays with `null` in the holes.
    public static let arrays = JSONFormat(rawValue: 1 << 1)
    /// Indent with two spaces and put each member on its own line.
    public static let prettyPrinted = JSONFormat(rawValue: 1 << 2)

    /// The plain form a user sees: no priorities, array-like objects as arrays.
    public static let plain: JSONFormat = [.arrays]
    /// The export form used on the wire and by `format=export`: priorities kept, no arrays.
    public static let export: JSONFormat = [.priorities]
}

extension Node {
    /// The node as JSON text.
    public func jsonString(format: JSONFormat = .plain) -> String {
        String(decoding: jsonBytes(format: format), as: UTF8.self)
    }

    /// The node as UTF-8 JSON bytes.
    public func jsonBytes(format: JSONFormat = .plain) -> [UInt8] {
        var writer = JSONWriter(format: format)
        writer.write(self, indent: 0)
        return writer.output
    }

    /// Whether the plain form of this children node is an array (Firebase's rule): every key a
    /// non-negative integer and the largest key below twice the number of children.
    public var isArrayLike: Bool {
        let children = self.children
        guard !children.isEmpty, let last = children.last?.key.intValue else { return false }
        guard let first = children.first?.key.intValue, first >= 0 else { return false }
        // Integer keys sort first, so the last key being an integer means all of them are.
        return last < 2 * children.count
    }
}

/// Formats numbers the way the protocol does: integral values within ±2^53 without a fraction,
/// other values in the shortest form that reads back to the same double.
public enum NumberFormatting {
    /// The JSON text of `number`.
    public static func json(_ number: Double) -> String {
        if let integer = LeafValue.exactInteger(number) { return String(integer) }
        return "\(number)"
    }

    /// Appends the JSON text of `number` (the bytes of ``json(_:)``) to `bytes`, without making a
    /// `String` for the integers most numbers are.
    public static func appendJSON(_ number: Double, to bytes: inout [UInt8]) {
        var writer = JSONWriter(format: .plain, output: bytes)
        bytes = []
        writer.writeNumber(number)
        bytes = writer.output
    }
}

struct JSONWriter {
    let format: JSONFormat
    var output: [UInt8] = []

    init(format: JSONFormat) {
        self.format = format
        output.reserveCapacity(256)
    }

    /// A writer that appends to `output`.
    init(format: JSONFormat, output: [UInt8]) {
        self.format = format
        self.output = output
    }

    mutating func write(_ node: Node, indent: Int) {
        let priority = format.contains(.priorities) ? node.priority : nil
        if let leaf = node.leafValue {
            guard let priority else { return writeLeaf(leaf) }
            output.append(UInt8(ascii: "{"))
            newline(indent + 1)
            writeString(".value")
            colon()
            writeLeaf(leaf)
            output.append(UInt8(ascii: ","))
            newline(indent + 1)
            writeString(".priority")
            colon()
            writePriority(priority)
            newline(indent)
            output.append(UInt8(ascii: "}"))
            return
        }
        if node.isEmpty {
            output.append(contentsOf: "null".utf8)
            return
        }
        if format.contains(.arrays) && priority == nil && node.isArrayLike {
            return writeArray(node, indent: indent)
        }
        output.append(UInt8(ascii: "{"))
        var first = true
        for (key, child) in node.children {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            newline(indent + 1)
            writeString(key.stringValue)
            colon()
            write(child, indent: indent + 1)
        }
        if let priority {
            output.append(UInt8(ascii: ","))
            newline(indent + 1)
            writeString(".priority")
            colon()
            writePriority(priority)
        }
        newline(indent)
        output.append(UInt8(ascii: "}"))
    }

    private mutating func writeArray(_ node: Node, indent: Int) {
        output.append(UInt8(ascii: "["))
        var next = 0
        for (key, child) in node.children {
            let position = key.intValue!
            while next < position {
                if next > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                output.append(contentsOf: "null".utf8)
                next += 1
            }
            if next > 0 { output.append(UInt8(ascii: ",")) }
            newline(indent + 1)
            write(child, indent: indent + 1)
            next += 1
        }
        newline(indent)
        output.append(UInt8(ascii: "]"))
    }

    private mutating func newline(_ indent: Int) {
        guard format.contains(.prettyPrinted) else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    private mutating func colon() {
        output.append(UInt8(ascii: ":"))
        if format.contains(.prettyPrinted) { output.append(UInt8(ascii: " ")) }
    }

    private mutating func writePriority(_ priority: Priority) {
        switch priority {
        case .number(let number): writeNumber(number)
        case .string(let string): writeString(string)
        }
    }

    private mutating func writeLeaf(_ leaf: LeafValue) {
        switch leaf {
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number): writeNumber(number)
        case .string(let string): writeString(string)
        }
    }

    mutating func writeNumber(_ number: Double) {
        if let integer = LeafValue.exactInteger(number) {
            if integer == 0 {
                output.append(UInt8(ascii: "0"))
                return
            }
            // Digits without allocating a String.
            var magnitude = integer.magnitude
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            withUnsafeMutableBytes(of: &digits) { raw in
                var position = raw.count
                while magnitude > 0 {
                    position -= 1
                    raw[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                }
                if integer < 0 { output.append(UInt8(ascii: "-")) }
                output.append(contentsOf: raw[position...])
            }
            return
        }
        output.append(contentsOf: "\(number)".utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeString(_ string: String) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(JSONWriter.hexDigits[Int(byte >> 4)])
                output.append(JSONWriter.hexDigits[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
