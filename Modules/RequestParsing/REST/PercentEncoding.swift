/// Percent-encoding of URL components (RFC 3986 §2.1), decoded strictly: every `%` starts two
/// hex digits, and the decoded bytes must be UTF-8, so a damaged URL is an error rather than a
/// different path or value.
package enum PercentEncoding {
    /// The text `encoded` stands for.
    ///
    /// `+` stays `+` (only a form body means a space by it; the REST API has none).
    /// - Parameters:
    ///   - encoded: the component as it came in the URL.
    ///   - what: the component in words, for the message (`the path`, `query parameter "orderBy"`).
    /// - Throws: ``RequestError`` `badEncoding` for a `%` without two hex digits after it, or for
    ///   decoded bytes that are not UTF-8.
    /// - Complexity: O(n).
    package static func decode(_ encoded: Substring, _ what: String) throws(RequestError) -> String {
        let utf8 = encoded.utf8
        guard utf8.contains(UInt8(ascii: "%")) else { return String(encoded) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard index != utf8.endIndex, let high = hexValue(utf8[index]),
                  utf8.index(after: index) != utf8.endIndex, let low = hexValue(utf8[utf8.index(after: index)]) else {
                throw RequestError(.badEncoding, "\(what) has a % not followed by two hex digits; write a literal % as %25.")
            }
            bytes.append(high << 4 | low)
            index = utf8.index(index, offsetBy: 2)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RequestError(.badEncoding, "\(what) percent-decodes to bytes that are not UTF-8; percent-encode the UTF-8 of the text.")
        }
        return text
    }

    /// `text` with every byte outside RFC 3986's unreserved characters percent-encoded (hex in
    /// capitals), so ``decode(_:_:)`` gives `text` back.
    package static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
