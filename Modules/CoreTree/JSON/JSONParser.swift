/// Parses UTF-8 JSON bytes straight into a ``Node``, reading the export format as it goes:
/// `.value` and `.priority` members become a node's value and priority, `.sv` members are kept
/// as server-value placeholders, `null` members vanish, and arrays become children `"0"`, `"1"`, ...
struct JSONParser {
    /// The deepest nesting accepted; deeper documents are refused instead of exhausting the stack.
    static let maxNesting = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var nesting: Int
    /// Where `bytes` starts in the whole document, so errors name the document's byte.
    private let offset: Int
    /// Whether a member named `.sv` was read: without one, no value read holds a server-value
    /// placeholder (``JSONStreamReader`` tells its consumer, which then need not look).
    private(set) var sawServerValue = false

    /// A parser over `bytes`; `nesting` is how deep the enclosing document already is at
    /// `bytes`' start and `offset` where they start in it (``JSONStreamReader`` parses a document
    /// piece by piece).
    init(bytes: UnsafeBufferPointer<UInt8>, nesting: Int = 0, offset: Int = 0) {
        self.bytes = bytes
        self.nesting = nesting
        self.offset = offset
    }

    /// Parses one complete document; trailing non-whitespace is an error.
    mutating func parseDocument() throws(CoreTreeError) -> Node {
        skipWhitespace()
        let node = try parseValue()
        try finishDocument()
        return node
    }

    /// Checks that only white space is left.
    mutating func finishDocument() throws(CoreTreeError) {
        skipWhitespace()
        if index != bytes.count { throw error("unexpected data after the JSON value") }
    }

    /// The byte at the read position, `nil` at the end.
    var currentByte: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The read position, in bytes.
    var position: Int { index }

    /// The text from byte `start` to the read position.
    func text(from start: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Moves past the current byte.
    mutating func advance() { index += 1 }

    /// Leaves an object or array entered with ``enter()``.
    mutating func leave() { nesting -= 1 }

    func error(_ what: String) -> CoreTreeError {
        CoreTreeError(.malformedJSON, "Malformed JSON at byte \(offset + index): \(what).")
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(CoreTreeError) -> Node {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return Node(.string(try parseString()))
        case UInt8(ascii: "t"): try expectLiteral("true"); return Node(.bool(true))
        case UInt8(ascii: "f"): try expectLiteral("false"); return Node(.bool(false))
        case UInt8(ascii: "n"): try expectLiteral("null"); return .empty
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return Node(.number(try parseNumber()))
        default: throw error("unexpected character \"\(Unicode.Scalar(bytes[index]))\"")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(CoreTreeError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    mutating func enter() throws(CoreTreeError) {
        nesting += 1
        if nesting > JSONParser.maxNesting { throw error("nesting deeper than \(JSONParser.maxNesting) levels") }
        index += 1
    }

    private mutating func parseObject() throws(CoreTreeError) -> Node {
        try enter()
        defer { nesting -= 1 }
        var entries: [(key: ChildKey, value: Node)] = []
        var explicitValue: Node?
        var priority: Priority?
        var placeholderPriority: Node?
        var sawNull = false
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .empty
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected \":\"") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            switch key {
            case ".value": explicitValue = value
            case ".priority":
                // A server value as the priority stays a placeholder until the write resolves it.
                if ServerValue.isPlaceholder(value) { placeholderPriority = value } else { priority = try priorityValue(value) }
            case ".sv":
                sawServerValue = true
                if value.isEmpty { sawNull = true }
                entries.append((ChildKey(key), value))
            default:
                if value.isEmpty { sawNull = true }
                entries.append((ChildKey(key), value))
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            } else {
                throw error("expected \",\" or \"}\"")
            }
        }
        if let explicitValue {
            if entries.contains(where: { !$0.value.isEmpty }) {
                throw CoreTreeError(.invalidValue, "An object with \".value\" may not have other children (besides \".priority\").")
            }
            let node = explicitValue.withPriority(priority)
            return placeholderPriority.map { ServerValue.carrying(node, priority: $0) } ?? node
        }
        let map = SortedMap(entries)
        let node = sawNull ? Node(children: map, priority: priority) : Node(nonEmptyChildren: map, priority: priority)
        return placeholderPriority.map { ServerValue.carrying(node, priority: $0) } ?? node
    }

    private func priorityValue(_ node: Node) throws(CoreTreeError) -> Priority? {
        switch node.leafValue {
        case .number(let number)?: return .number(number)
        case .string(let string)?: return .string(string)
        case nil where node.isEmpty: return nil
        default:
            throw CoreTreeError(.invalidPriority, "A priority must be a number, a string or null, not \(node).")
        }
    }

    private mutating func parseArray() throws(CoreTreeError) -> Node {
        try enter()
        defer { nesting -= 1 }
        var entries: [(key: ChildKey, value: Node)] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .empty
        }
        var position = 0
        while true {
            skipWhitespace()
            let value = try parseValue()
            if !value.isEmpty { entries.append((ChildKey(String(position)), value)) }
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                break
            } else {
                throw error("expected \",\" or \"]\"")
            }
        }
        // "0", "1", ... "9", "10": integer keys sort numerically, so the entries are already in order.
        return Node(nonEmptyChildren: SortedMap(sortedUniqueElements: entries), priority: nil)
    }

    mutating func parseString() throws(CoreTreeError) -> String {
        index += 1  // opening quote
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                // ASCII (most keys and many values) is valid UTF-8 as it is: no validation pass.
                if !slice.contains(where: { $0 >= 0x80 }) { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                return string
            }
            if byte == UInt8(ascii: "\\") { return try parseEscapedString(from: start) }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            index += 1
        }
        throw error("unterminated string")
    }

    private mutating func parseEscapedString(from start: Int) throws(CoreTreeError) -> String {
        var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &buffer)
                default: throw error("invalid escape \"\\\(Unicode.Scalar(escape))\"")
                }
            default:
                if byte < 0x20 { throw error("unescaped control character in a string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(CoreTreeError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to buffer: inout [UInt8]) throws(CoreTreeError) {
        var scalarValue = try parseHex4()
        if scalarValue >= 0xD800 && scalarValue < 0xDC00 {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("unpaired surrogate in \\u escape")
            }
            index += 2
            let low = try parseHex4()
            guard low >= 0xDC00 && low < 0xE000 else { throw error("unpaired surrogate in \\u escape") }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        } else if scalarValue >= 0xDC00 && scalarValue < 0xE000 {
            throw error("unpaired surrogate in \\u escape")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error("invalid \\u escape") }
        buffer.append(contentsOf: UTF8.encode(scalar)!)
    }

    mutating func parseNumber() throws(CoreTreeError) -> Double {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let integerStart = index
        var integer: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            if index - integerStart < 18 { integer = integer &* 10 &+ Int64(bytes[index] &- UInt8(ascii: "0")) }
            index += 1
        }
        let digitCount = index - integerStart
        if digitCount == 0 { throw error("a number needs digits") }
        if digitCount > 1 && bytes[integerStart] == UInt8(ascii: "0") { throw error("numbers may not have leading zeros") }
        var simple = digitCount <= 15
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            simple = false
            index += 1
            let fractionStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            if index == fractionStart { throw error("a fraction needs digits") }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            simple = false
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            let exponentStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            if index == exponentStart { throw error("an exponent needs digits") }
        }
        if simple {
            return negative ? (integer == 0 ? -0.0 : -Double(integer)) : Double(integer)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text) else { throw error("invalid number") }
        guard value.isFinite else {
            throw CoreTreeError(.invalidValue, "The number \(text) is out of range; numbers must be finite doubles.")
        }
        return value
    }
}

extension Node {
    /// Parses a JSON document (plain or export format) from UTF-8 bytes.
    ///
    /// - Throws: ``CoreTreeError`` with code `malformedJSON` for invalid JSON, `invalidPriority`
    ///   for a priority that is not a number or string, `invalidValue` for `.value` beside children
    ///   or a number that overflows a double.
    /// - Complexity: O(n) for documents whose object members are in key order, O(n log n) otherwise.
    public init(json bytes: some Sequence<UInt8>) throws(CoreTreeError) {
        let result: Result<Node, CoreTreeError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(bytes: buffer)
            return Result { () throws(CoreTreeError) in try parser.parseDocument() }
        }
        if let result {
            self = try result.get()
        } else {
            self = try Node(json: Array(bytes))
        }
    }

    /// Parses a JSON document (plain or export format) from a string.
    ///
    /// - Throws: ``CoreTreeError`` as ``init(json:)-(Sequence<UInt8>)`` does.
    public init(jsonString: String) throws(CoreTreeError) {
        var string = jsonString
        let result: Result<Node, CoreTreeError> = string.withUTF8 { buffer in
            var parser = JSONParser(bytes: buffer)
            return Result { () throws(CoreTreeError) in try parser.parseDocument() }
        }
        self = try result.get()
    }
}
