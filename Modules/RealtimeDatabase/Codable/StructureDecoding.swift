import Foundation

/// One ``Database/Decoder/decode(_:from:)`` call: its settings, and how each tree value becomes
/// a value of the type asked for.
struct StructureDecoding {
    let options: Database.Decoder.Options

    /// A `T` from the tree value `raw` at `codingPath`.
    func unbox<T: Decodable>(_ raw: Any, as type: T.Type, at codingPath: [any CodingKey]) throws -> T {
        let value = TreeValue.unwrapped(raw)
        if T.self == Date.self { return try unboxDate(value, at: codingPath) as! T }
        if T.self == Data.self { return try unboxData(value, at: codingPath) as! T }
        if T.self == URL.self {
            let text = try unboxString(value, as: URL.self, at: codingPath)
            guard let url = URL(string: text) else { throw corrupted("\"\(text)\" is not a URL.", at: codingPath) }
            return url as! T
        }
        if T.self == Decimal.self { return try unboxDecimal(value, at: codingPath) as! T }
        if let dictionary = T.self as? any StringKeyedDecodable.Type {
            return try dictionary.decodeEntries(from: value, with: self, at: codingPath) as! T
        }
        if options.passthrough.isPassthroughType(value), let same = value as? T, Swift.type(of: value) == T.self { return same }
        return try T(from: StructureDecoder(decoding: self, value: value, codingPath: codingPath))
    }

    private func unboxDate(_ value: Any, at codingPath: [any CodingKey]) throws -> Date {
        try requireValue(value, Date.self, at: codingPath)
        switch options.date {
        case .deferredToDate:
            return try Date(from: StructureDecoder(decoding: self, value: value, codingPath: codingPath))
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try floatingPoint(value, as: Date.self, at: codingPath))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try floatingPoint(value, as: Date.self, at: codingPath) / 1000)
        case .iso8601:
            let text = try unboxString(value, as: Date.self, at: codingPath)
            guard let date = try? Date.ISO8601FormatStyle().parse(text) else {
                throw corrupted("\"\(text)\" is not an ISO 8601 date (such as 2024-05-01T12:00:00Z).", at: codingPath)
            }
            return date
        case .formatted(let formatter):
            let text = try unboxString(value, as: Date.self, at: codingPath)
            guard let date = formatter.date(from: text) else {
                throw corrupted("\"\(text)\" does not match the date formatter's format.", at: codingPath)
            }
            return date
        case .custom(let decode):
            return try decode(StructureDecoder(decoding: self, value: value, codingPath: codingPath))
        }
    }

    private func unboxData(_ value: Any, at codingPath: [any CodingKey]) throws -> Data {
        try requireValue(value, Data.self, at: codingPath)
        switch options.data {
        case .deferredToData:
            return try Data(from: StructureDecoder(decoding: self, value: value, codingPath: codingPath))
        case .base64:
            let text = try unboxString(value, as: Data.self, at: codingPath)
            guard let data = Data(base64Encoded: text) else { throw corrupted("The string is not valid base64.", at: codingPath) }
            return data
        case .blob:
            guard let data = value as? Data else { throw mismatch(Data.self, value, at: codingPath) }
            return data
        case .custom(let decode):
            return try decode(StructureDecoder(decoding: self, value: value, codingPath: codingPath))
        }
    }

    private func unboxDecimal(_ value: Any, at codingPath: [any CodingKey]) throws -> Decimal {
        try requireValue(value, Decimal.self, at: codingPath)
        if let decimal = value as? NSDecimalNumber { return decimal.decimalValue }
        switch TreeValue.number(value) {
        case .integer(let integer)?: return Decimal(integer)
        case .unsigned(let unsigned)?: return Decimal(unsigned)
        case .floating(let floating)?: return Decimal(floating)
        default: throw mismatch(Decimal.self, value, at: codingPath)
        }
    }

    // MARK: - Leaves

    func unboxString(_ value: Any, as type: Any.Type = String.self, at codingPath: [any CodingKey]) throws -> String {
        try requireValue(value, type, at: codingPath)
        guard let string = value as? String else { throw mismatch(type, value, at: codingPath) }
        return string
    }

    func unboxBool(_ value: Any, at codingPath: [any CodingKey]) throws -> Bool {
        try requireValue(value, Bool.self, at: codingPath)
        guard case .bool(let bool)? = TreeValue.number(value) else { throw mismatch(Bool.self, value, at: codingPath) }
        return bool
    }

    /// An integer of type `I`, from a number that fits it exactly.
    func unboxInteger<I: FixedWidthInteger>(_ value: Any, as type: I.Type, at codingPath: [any CodingKey]) throws -> I {
        try requireValue(value, type, at: codingPath)
        let result: I?
        switch TreeValue.number(value) {
        case .integer(let integer)?: result = I(exactly: integer)
        case .unsigned(let unsigned)?: result = I(exactly: unsigned)
        case .floating(let floating)?: result = I(exactly: floating)
        default: throw mismatch(type, value, at: codingPath)
        }
        guard let result else { throw corrupted("The number \(value) does not fit in \(type).", at: codingPath) }
        return result
    }

    /// A `Double` from a number (or a non-conforming float's string, with that strategy).
    func unboxDouble(_ value: Any, at codingPath: [any CodingKey]) throws -> Double {
        try floatingPoint(value, as: Double.self, at: codingPath)
    }

    /// A `Float`: the nearest to the number, which must be within `Float`'s range.
    func unboxFloat(_ value: Any, at codingPath: [any CodingKey]) throws -> Float {
        let double = try floatingPoint(value, as: Float.self, at: codingPath)
        guard !double.isFinite || abs(double) <= Double(Float.greatestFiniteMagnitude) else {
            throw corrupted("The number \(double) does not fit in Float.", at: codingPath)
        }
        return Float(double)
    }

    private func floatingPoint(_ value: Any, as type: Any.Type, at codingPath: [any CodingKey]) throws -> Double {
        try requireValue(value, type, at: codingPath)
        switch TreeValue.number(value) {
        case .integer(let integer)?: return Double(integer)
        case .unsigned(let unsigned)?: return Double(unsigned)
        case .floating(let floating)?: return floating
        case .bool?: throw mismatch(type, value, at: codingPath)
        case nil: break
        }
        if let text = value as? String, case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = options.nonConformingFloat {
            if text == positiveInfinity { return .infinity }
            if text == negativeInfinity { return -.infinity }
            if text == nan { return .nan }
        }
        throw mismatch(type, value, at: codingPath)
    }

    // MARK: - Keys

    /// A keyed container's entries under the key strategy: keys as the types declare them.
    /// Where two keys convert to the same one, the first in key order wins.
    func convertedKeys(_ entries: [String: Any], at codingPath: [any CodingKey]) -> [String: Any] {
        switch options.key {
        case .useDefaultKeys:
            return entries
        case .convertFromSnakeCase:
            return Dictionary(entries.sorted { $0.key < $1.key }.map { (SnakeCase.toCamelCase($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        case .custom(let convert):
            return Dictionary(
                entries.sorted { $0.key < $1.key }.map { (convert(codingPath + [StructureKey(stringValue: $0.key)]).stringValue, $0.value) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    // MARK: - Errors

    /// Throws `valueNotFound` when `value` is `null`.
    func requireValue(_ value: Any, _ type: Any.Type, at codingPath: [any CodingKey]) throws {
        guard value is NSNull else { return }
        throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found null."))
    }

    func mismatch(_ type: Any.Type, _ value: Any, at codingPath: [any CodingKey]) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found \(TreeValue.describe(value))."))
    }

    func corrupted(_ message: String, at codingPath: [any CodingKey]) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: message))
    }
}

/// A `[String: Value]` dictionary: its keys are data, not a type's coding keys, so the key
/// strategy leaves them alone.
protocol StringKeyedDecodable {
    static func decodeEntries(from value: Any, with decoding: StructureDecoding, at codingPath: [any CodingKey]) throws -> Self
}

extension Dictionary: StringKeyedDecodable where Key == String, Value: Decodable {
    static func decodeEntries(from value: Any, with decoding: StructureDecoding, at codingPath: [any CodingKey]) throws -> Self {
        try decoding.requireValue(value, Self.self, at: codingPath)
        guard let entries = TreeValue.object(value) else { throw decoding.mismatch(Self.self, value, at: codingPath) }
        var result: [String: Value] = [:]
        result.reserveCapacity(entries.count)
        for (key, element) in entries {
            result[key] = try decoding.unbox(element, as: Value.self, at: codingPath + [StructureKey(stringValue: key)])
        }
        return result
    }
}
