/// Reads a JSON document member by member, handing the values a caller wants as data straight to
/// the ``Node`` parser.
///
/// Protocol envelopes (`{"t":"d","d":{"r":1,"a":"p","b":{"p":"/x","d":{...}}}}`) mix fields whose
/// JSON shape matters (a `null` that means "delete" or "no bound", a number that is a request
/// number) with values that are data. A reader walks the envelope without building anything for
/// the parts it skips, and parses data with the same parser as ``Node/init(json:)-(Sequence<UInt8>)``:
///
/// ```swift
/// let (action, data) = try JSONReader.read(#"{"a":"p","d":{"x":1}}"#) { reader throws(CoreTreeError) in
///     var action = "", data = Node.empty
///     try reader.beginObject()
///     while let key = try reader.nextKey() {
///         switch key {
///         case "a": action = try reader.readString()
///         case "d": data = try reader.readNode()
///         default: try reader.skipValue()
///         }
///     }
///     return (action, data)
/// }
/// ```
///
/// A reader exists only inside ``read(_:_:)``; it must not escape the closure.
public struct JSONReader {
    /// The kinds of JSON value.
    public enum ValueKind: Sendable, Hashable {
        /// `{...}`
        case object
        /// `[...]`
        case array
        /// `"..."`
        case string
        /// A number.
        case number
        /// `true` or `false`.
        case bool
        /// `null`.
        case null
    }

    private var parser: JSONParser
    /// For each open object or array: whether a member or element has been read yet.
    private var containers: [Bool] = []

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        parser = JSONParser(bytes: bytes)
    }

    /// Runs `body` with a reader over the UTF-8 of `text`, then checks that nothing but white space
    /// follows what `body` read.
    ///
    /// - Throws: what `body` throws; ``CoreTreeError`` (`malformedJSON`) for trailing data.
    public static func read<T>(_ text: String, _ body: (inout JSONReader) throws(CoreTreeError) -> T) throws(CoreTreeError) -> T {
        var text = text
        let result: Result<T, CoreTreeError> = text.withUTF8 { buffer in
            var reader = JSONReader(bytes: buffer)
            return Result { () throws(CoreTreeError) in
                let value = try body(&reader)
                try reader.parser.finishDocument()
                return value
            }
        }
        return try result.get()
    }

    /// The kind of the next value (white space before it is skipped).
    public mutating func peek() throws(CoreTreeError) -> ValueKind {
        parser.skipWhitespace()
        guard let byte = parser.currentByte else { throw parser.error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw parser.error("unexpected character \"\(Unicode.Scalar(byte))\"")
        }
    }

    /// Reads the next value as data (export format; `null` is ``Node/empty``).
    public mutating func readNode() throws(CoreTreeError) -> Node {
        parser.skipWhitespace()
        return try parser.parseValue()
    }

    /// Reads a string.
    public mutating func readString() throws(CoreTreeError) -> String {
        guard try peek() == .string else { throw parser.error("expected a string") }
        return try parser.parseString()
    }

    /// Reads a number.
    public mutating func readNumber() throws(CoreTreeError) -> Double {
        guard try peek() == .number else { throw parser.error("expected a number") }
        return try parser.parseNumber()
    }

    /// Reads `true` or `false`.
    public mutating func readBool() throws(CoreTreeError) -> Bool {
        guard try peek() == .bool else { throw parser.error("expected true or false") }
        if parser.currentByte == UInt8(ascii: "t") {
            try parser.expectLiteral("true")
            return true
        }
        try parser.expectLiteral("false")
        return false
    }

    /// Reads `null` if it comes next; returns whether it did.
    public mutating func readNullIfPresent() throws(CoreTreeError) -> Bool {
        guard try peek() == .null else { return false }
        try parser.expectLiteral("null")
        return true
    }

    /// Skips the next value, whatever it is.
    public mutating func skipValue() throws(CoreTreeError) {
        switch try peek() {
        case .object:
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case .array:
            try beginArray()
            while try nextElement() { try skipValue() }
        case .string: _ = try parser.parseString()
        case .number: _ = try parser.parseNumber()
        case .bool: _ = try readBool()
        case .null: try parser.expectLiteral("null")
        }
    }

    /// Skips the next value and returns its JSON text, to be read later (when a sibling member that
    /// says how to read it comes after it).
    public mutating func readRawValue() throws(CoreTreeError) -> String {
        _ = try peek()
        let start = parser.position
        try skipValue()
        return parser.text(from: start)
    }

    /// Enters an object; read its members with ``nextKey()``.
    public mutating func beginObject() throws(CoreTreeError) {
        guard try peek() == .object else { throw parser.error("expected an object") }
        try parser.enter()
        containers.append(false)
    }

    /// The next member's name (its value comes next), or `nil` after the object's last member
    /// (the object is then left).
    public mutating func nextKey() throws(CoreTreeError) -> String? {
        guard try nextEntry(closing: UInt8(ascii: "}")) else { return nil }
        guard try peek() == .string else { throw parser.error("expected a member name") }
        let key = try parser.parseString()
        parser.skipWhitespace()
        guard parser.currentByte == UInt8(ascii: ":") else { throw parser.error("expected \":\"") }
        parser.advance()
        return key
    }

    /// Enters an array; read its elements while ``nextElement()`` returns `true`.
    public mutating func beginArray() throws(CoreTreeError) {
        guard try peek() == .array else { throw parser.error("expected an array") }
        try parser.enter()
        containers.append(false)
    }

    /// Whether another element follows (it comes next); `false` after the last (the array is
    /// then left).
    public mutating func nextElement() throws(CoreTreeError) -> Bool {
        try nextEntry(closing: UInt8(ascii: "]"))
    }

    private mutating func nextEntry(closing: UInt8) throws(CoreTreeError) -> Bool {
        guard let started = containers.last else { throw parser.error("not inside an object or array") }
        parser.skipWhitespace()
        if parser.currentByte == closing {
            parser.advance()
            parser.leave()
            containers.removeLast()
            return false
        }
        if started {
            guard parser.currentByte == UInt8(ascii: ",") else {
                throw parser.error(closing == UInt8(ascii: "}") ? "expected \",\" or \"}\"" : "expected \",\" or \"]\"")
            }
            parser.advance()
        }
        containers[containers.count - 1] = true
        return true
    }
}
