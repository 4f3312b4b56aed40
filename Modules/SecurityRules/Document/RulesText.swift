/// A JSON value of a rules document with the place it starts, so errors can point at it.
indirect enum RulesText: Sendable {
    case object([(key: String, keyAt: RulesText.Location, value: RulesText)], at: Location)
    case array([RulesText], at: Location)
    case string(String, at: Location)
    case number(Double, at: Location)
    case bool(Bool, at: Location)
    case null(at: Location)

    /// A line and column (both from 1) of the document.
    struct Location: Sendable, Hashable {
        let line: Int
        let column: Int
    }

    var location: Location {
        switch self {
        case .object(_, let at), .array(_, let at), .string(_, let at), .number(_, let at), .bool(_, let at), .null(let at): at
        }
    }

    /// What the value is, for messages.
    var kindName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    /// The value as strict JSON.
    var strictJSON: String {
        switch self {
        case .object(let members, _):
            "{" + members.map { Self.quote($0.key) + ":" + $0.value.strictJSON }.joined(separator: ",") + "}"
        case .array(let elements, _): "[" + elements.map(\.strictJSON).joined(separator: ",") + "]"
        case .string(let value, _): Self.quote(value)
        case .number(let value, _): RuleValue.format(value)
        case .bool(let value, _): value ? "true" : "false"
        case .null: "null"
        }
    }

    static func quote(_ string: String) -> String {
        var quoted = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}

/// Parses rules documents in the JSON the Firebase console accepts: strict JSON plus `//` and
/// `/* */` comments, line breaks inside strings, single-quoted strings and trailing commas.
struct RulesTextParser {
    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var line = 1
    private var column = 1

    static func parse(_ text: String) throws(RulesError) -> RulesText {
        var parser = RulesTextParser(scalars: Array(text.unicodeScalars))
        try parser.skipSpace()
        let value = try parser.value(depth: 0)
        try parser.skipSpace()
        guard parser.position == parser.scalars.count else {
            throw parser.error("unexpected text after the end of the document")
        }
        return value
    }

    private init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

    private var location: RulesText.Location { RulesText.Location(line: line, column: column) }

    private func error(_ message: String, at location: RulesText.Location? = nil) -> RulesError {
        let at = location ?? self.location
        return RulesError(message, line: at.line, column: at.column, code: .malformedDocument)
    }

    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private mutating func advance() {
        if scalars[position] == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        position += 1
    }

    private mutating func skipSpace() throws(RulesError) {
        while let scalar = current {
            if scalar.properties.isWhitespace || scalar == "\u{FEFF}" {
                advance()
            } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "/" {
                while let next = current, next != "\n" { _ = next; advance() }
            } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "*" {
                let start = location
                advance()
                advance()
                while true {
                    guard let next = current else { throw error("this comment is never closed with */", at: start) }
                    if next == "*", position + 1 < scalars.count, scalars[position + 1] == "/" {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            } else {
                return
            }
        }
    }

    /// Documents nest far less than this; the bound keeps hostile input from exhausting the stack.
    private static let deepest = 128

    private mutating func value(depth: Int) throws(RulesError) -> RulesText {
        guard depth < Self.deepest else { throw error("the document nests deeper than \(Self.deepest) levels") }
        let start = location
        guard let scalar = current else { throw error("the document ends where a value should be") }
        switch scalar {
        case "{": return try object(depth: depth)
        case "[":
            advance()
            var elements: [RulesText] = []
            while true {
                try skipSpace()
                if current == "]" {
                    advance()
                    return .array(elements, at: start)
                }
                elements.append(try value(depth: depth + 1))
                try skipSpace()
                if current == "," { advance(); continue }
                guard current == "]" else { throw error("expected , or ] in this array") }
            }
        case "\"", "'": return .string(try string(), at: start)
        case "-", "0"..."9": return try number()
        default:
            var word = ""
            while let next = current, next.properties.isAlphabetic {
                word.unicodeScalars.append(next)
                advance()
            }
            switch word {
            case "true": return .bool(true, at: start)
            case "false": return .bool(false, at: start)
            case "null": return .null(at: start)
            case "": throw error("unexpected character \(scalar)")
            default: throw error("unexpected word \(word); a value is an object, a string, a number, true, false or null", at: start)
            }
        }
    }

    private mutating func object(depth: Int) throws(RulesError) -> RulesText {
        let start = location
        advance()
        var members: [(key: String, keyAt: RulesText.Location, value: RulesText)] = []
        var seen: Set<String> = []
        while true {
            try skipSpace()
            if current == "}" {
                advance()
                return .object(members, at: start)
            }
            let keyAt = location
            guard current == "\"" || current == "'" else { throw error("expected a quoted key or } in this object") }
            let key = try string()
            guard seen.insert(key).inserted else { throw error("the key \"\(key)\" appears twice in this object", at: keyAt) }
            try skipSpace()
            guard current == ":" else { throw error("expected : after the key \"\(key)\"") }
            advance()
            try skipSpace()
            members.append((key, keyAt, try value(depth: depth + 1)))
            try skipSpace()
            if current == "," { advance(); continue }
            guard current == "}" else { throw error("expected , or } after the value of \"\(key)\"") }
        }
    }

    private mutating func string() throws(RulesError) -> String {
        let start = location
        let quote = scalars[position]
        advance()
        var value = ""
        while let scalar = current {
            advance()
            if scalar == quote { return value }
            guard scalar == "\\" else {
                value.unicodeScalars.append(scalar)
                continue
            }
            guard let escaped = current else { break }
            advance()
            if let character = RuleEscapes.character(escaped) {
                value.unicodeScalars.append(character)
                continue
            }
            switch escaped {
            case "u":
                var code: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = current, let nibble = UInt32(String(digit), radix: 16) else {
                        throw error("\\u needs four hexadecimal digits")
                    }
                    code = code << 4 | nibble
                    advance()
                }
                guard let decoded = Unicode.Scalar(code) else { throw error("\\u\(String(code, radix: 16)) is not a character") }
                value.unicodeScalars.append(decoded)
            case "\n":
                break  // a backslash before a line break continues the string
            default:
                value.unicodeScalars.append(escaped)
            }
        }
        throw error("this string is never closed", at: start)
    }

    private mutating func number() throws(RulesError) -> RulesText {
        let start = location
        var text = ""
        while let scalar = current, "0123456789+-.eE".unicodeScalars.contains(scalar) {
            text.unicodeScalars.append(scalar)
            advance()
        }
        guard let value = Double(text), value.isFinite else { throw error("\(text) is not a number", at: start) }
        return .number(value, at: start)
    }
}
