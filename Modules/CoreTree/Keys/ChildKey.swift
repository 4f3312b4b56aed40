/// The name of a child in the tree, ordered the way the Firebase Realtime Database orders keys.
///
/// Keys that parse as 32-bit integers (optional `-`, digits, no leading zeros, not `-0`) sort first,
/// by numeric value; every other key follows, compared by UTF-16 code units. Two sentinels,
/// ``min`` and ``max``, sort before and after every real key; query bounds use them.
///
/// Creating a `ChildKey` does not validate it; use ``Validation/validateKey(_:)`` or
/// ``TreePath/init(validating:)`` for input from users.
public struct ChildKey: Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    @usableFromInline
    enum Kind: UInt8, Sendable {
        case min = 0, integer = 1, string = 2, max = 3
    }

    /// The key as it appears in paths and on the wire.
    public let stringValue: String
    @usableFromInline let integerValue: Int32
    @usableFromInline let kind: Kind

    /// Creates a key from its string form, noting whether it is an integer key.
    @inlinable
    public init(_ string: String) {
        stringValue = string
        if let value = ChildKey.parseInteger(string) {
            integerValue = value
            kind = .integer
        } else {
            integerValue = 0
            kind = .string
        }
    }

    public init(stringLiteral value: String) { self.init(value) }

    @usableFromInline
    init(sentinel kind: Kind, name: String) {
        self.stringValue = name
        self.integerValue = 0
        self.kind = kind
    }

    /// A key that sorts before every other key (`[MIN_NAME]` on the wire).
    public static let min = ChildKey(sentinel: .min, name: "[MIN_NAME]")
    /// A key that sorts after every other key (`[MAX_NAME]` on the wire).
    public static let max = ChildKey(sentinel: .max, name: "[MAX_NAME]")
    /// The pseudo-key `.priority` that addresses a node's priority.
    public static let priority = ChildKey(".priority")
    /// The key `.info`, the root of the client's connection-state tree.
    public static let info = ChildKey(".info")
    /// The key `.sv` that marks a server-value placeholder.
    public static let serverValue = ChildKey(".sv")
    /// The key `.value` of the export format.
    public static let value = ChildKey(".value")

    /// Whether this key is the ``min`` sentinel.
    public var isMin: Bool { kind == .min }
    /// Whether this key is the ``max`` sentinel.
    public var isMax: Bool { kind == .max }
    /// Whether this key is ``priority``.
    public var isPriorityKey: Bool { kind == .string && stringValue == ".priority" }
    /// The key's value when it is an integer key, otherwise `nil`.
    public var intValue: Int? { kind == .integer ? Int(integerValue) : nil }

    public var description: String { stringValue }

    /// The integer a key denotes, following the protocol: optional `-`, 1 to 10 digits, no leading
    /// zero (except `"0"` itself), not `"-0"`, and within the 32-bit signed range.
    @inlinable
    static func parseInteger(_ string: String) -> Int32? {
        var contiguous = string
        return contiguous.withUTF8 { parseInteger(bytes: $0) }
    }

    @inlinable
    static func parseInteger(bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        let count = bytes.count
        if count == 0 || count > 11 { return nil }
        var index = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
            if count == 1 { return nil }
        }
        let digitCount = count - index
        if digitCount > 10 { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            // "0" is an integer; "00", "01" and "-0" are not.
            return (digitCount == 1 && !negative) ? 0 : nil
        }
        var value: Int64 = 0
        while index < count {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte &- UInt8(ascii: "0"))
            index += 1
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }

    @inlinable
    public static func < (lhs: ChildKey, rhs: ChildKey) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Keys are equal when they have the same kind and the same UTF-8 bytes.
    ///
    /// Not Swift's `String ==`, which treats canonically equivalent strings (`"é"` and `"e\u{301}"`)
    /// as equal while ``compare(_:_:)`` and the database keep them apart.
    @inlinable
    public static func == (lhs: ChildKey, rhs: ChildKey) -> Bool {
        lhs.kind == rhs.kind && lhs.stringValue.utf8.elementsEqual(rhs.stringValue.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(stringValue)
    }

    /// Three-way comparison in Firebase key order: negative, zero or positive.
    @inlinable
    public static func compare(_ lhs: ChildKey, _ rhs: ChildKey) -> Int {
        if lhs.kind != rhs.kind {
            return lhs.kind.rawValue < rhs.kind.rawValue ? -1 : 1
        }
        switch lhs.kind {
        case .min, .max:
            return 0
        case .integer:
            if lhs.integerValue != rhs.integerValue {
                return lhs.integerValue < rhs.integerValue ? -1 : 1
            }
            let lengthDifference = lhs.stringValue.utf8.count - rhs.stringValue.utf8.count
            return lengthDifference == 0 ? 0 : (lengthDifference < 0 ? -1 : 1)
        case .string:
            return UTF16Order.compare(lhs.stringValue, rhs.stringValue)
        }
    }
}
