/// Where a JSON value that starts at a known byte ends, found by a scan that stops at the end of
/// the bytes read so far and resumes when more arrive (``JSONStreamReader`` receives a document
/// in chunks).
///
/// The scan only tracks strings (quotes and escapes) and bracket depth; it does not check the
/// value. The parser that reads the value afterwards does, so a malformed value is reported by
/// the parser at its exact byte, never mistaken for a well-formed one.
struct JSONValueExtent {
    enum Kind {
        /// An object or an array, from its opening bracket to the matching closing one.
        case container
        /// A string, from its opening quote to its closing one.
        case string
        /// A number or a literal (`true`, `false`, `null`): a run of letters, digits, `+`, `-` and `.`.
        case scalar
    }

    enum Outcome: Equatable {
        /// The value ends just before document byte `end`.
        case complete(end: Int)
        /// The bytes read so far end inside the value.
        case incomplete
        /// The value is longer than the limit scanned for.
        case tooLarge
    }

    let kind: Kind
    /// The document offset of the value's first byte.
    let start: Int
    /// The document offset up to which the value has been scanned.
    private var scanned: Int
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// A scan of the value of `kind` at document offset `start`.
    init(kind: Kind, start: Int) {
        self.kind = kind
        self.start = start
        scanned = start
    }

    /// Scans on through `bytes` (the document from offset `bytesStart`) until the value ends, the
    /// bytes end, or `limit` bytes of the value have been seen.
    ///
    /// - Complexity: O(bytes newly scanned).
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, bytesStart: Int, limit: Int) -> Outcome {
        let stop = min(bytesStart + bytes.count, start + limit)
        var index = scanned - bytesStart
        let end = stop - bytesStart
        defer { scanned = bytesStart + index }
        switch kind {
        case .scalar:
            while index < end {
                switch bytes[index] {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                    index += 1
                default:
                    return .complete(end: bytesStart + index)
                }
            }
        case .string, .container:
            if index == start - bytesStart {
                // The opening quote or bracket.
                if kind == .string { inString = true } else { depth = 1 }
                index += 1
            }
            while index < end {
                let byte = bytes[index]
                index += 1
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                        if kind == .string { return .complete(end: bytesStart + index) }
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return .complete(end: bytesStart + index) }
                default: break
                }
            }
        }
        return bytesStart + index >= start + limit ? .tooLarge : .incomplete
    }
}
