import Foundation

/// A tree ``Database/Encoder`` is building: finished values, and containers still being filled
/// (held by reference, so a nested container or a super-encoder fills its place after it was made).
indirect enum EncodedValue {
    /// A finished value: `NSNumber`, `Bool`, `String`, `NSNull`, `NSDecimalNumber`, `Data`
    /// (`.blob`), or a value passed through as it is.
    case value(Any)
    case array(EncodedArray)
    case object(EncodedObject)
    /// Whatever an encoder handed out (a super-encoder, a custom strategy's) ends up holding.
    case deferred(StructureEncoder)

    /// The tree in Foundation form.
    var foundationValue: Any {
        switch self {
        case .value(let value): value
        case .array(let array): array.elements.map(\.foundationValue)
        case .object(let object): object.entries.mapValues(\.foundationValue)
        case .deferred(let encoder): (encoder.result ?? .object(EncodedObject())).foundationValue
        }
    }
}

/// An array being filled.
final class EncodedArray {
    var elements: [EncodedValue] = []
}

/// An object being filled; a key written twice keeps the last value.
final class EncodedObject {
    var entries: [String: EncodedValue] = [:]
}

/// One ``Database/Encoder/encode(_:)`` call: its settings, and how each value becomes a tree.
struct StructureEncoding {
    let options: Database.Encoder.Options

    /// The tree for `value` at `codingPath`, or nil when it encoded nothing at all.
    func box<T: Encodable>(_ value: T, at codingPath: [any CodingKey]) throws -> EncodedValue? {
        if let date = value as? Date { return try box(date, at: codingPath) }
        if let data = value as? Data { return try box(data, at: codingPath) }
        if let url = value as? URL { return .value(url.absoluteString) }
        if let decimal = value as? Decimal { return .value(NSDecimalNumber(decimal: decimal)) }
        if let dictionary = value as? any StringKeyedEncodable { return .object(try dictionary.encodeEntries(with: self, at: codingPath)) }
        if options.passthrough.isPassthroughType(value) { return .value(value) }
        return try encoded(at: codingPath) { try value.encode(to: $0) }
    }

    /// The tree for `value`, an empty object where it encoded nothing (as a container's element).
    func boxElement<T: Encodable>(_ value: T, at codingPath: [any CodingKey]) throws -> EncodedValue {
        try box(value, at: codingPath) ?? .object(EncodedObject())
    }

    /// What `body` encodes into a fresh encoder at `codingPath`, or nil for nothing.
    private func encoded(at codingPath: [any CodingKey], _ body: (StructureEncoder) throws -> Void) throws -> EncodedValue? {
        let encoder = StructureEncoder(encoding: self, codingPath: codingPath)
        try body(encoder)
        return encoder.result
    }

    private func box(_ date: Date, at codingPath: [any CodingKey]) throws -> EncodedValue? {
        switch options.date {
        case .deferredToDate: try encoded(at: codingPath) { try date.encode(to: $0) }
        case .secondsSince1970: .value(NSNumber(value: date.timeIntervalSince1970))
        case .millisecondsSince1970: .value(NSNumber(value: date.timeIntervalSince1970 * 1000))
        case .iso8601: .value(date.formatted(.iso8601))
        case .formatted(let formatter): .value(formatter.string(from: date))
        case .custom(let encode): try encoded(at: codingPath) { try encode(date, $0) } ?? .object(EncodedObject())
        }
    }

    private func box(_ data: Data, at codingPath: [any CodingKey]) throws -> EncodedValue? {
        switch options.data {
        case .deferredToData: try encoded(at: codingPath) { try data.encode(to: $0) }
        case .base64: .value(data.base64EncodedString())
        case .blob: .value(data)
        case .custom(let encode): try encoded(at: codingPath) { try encode(data, $0) } ?? .object(EncodedObject())
        }
    }

    /// A floating-point number, or its string under `convertToString`.
    ///
    /// - Throws: `EncodingError.invalidValue` for a non-finite number under `.throw`.
    func boxFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ number: F, at codingPath: [any CodingKey]) throws -> EncodedValue {
        guard number.isFinite else {
            switch options.nonConformingFloat {
            case .throw:
                throw EncodingError.invalidValue(
                    number,
                    EncodingError.Context(
                        codingPath: codingPath,
                        debugDescription: "\(number) cannot be stored: the database holds finite numbers only. Use nonConformingFloatEncodingStrategy .convertToString to store it as a string."))
            case .convertToString(let positiveInfinity, let negativeInfinity, let nan):
                return .value(number.isNaN ? nan : number > 0 ? positiveInfinity : negativeInfinity)
            }
        }
        // A Float keeps its shortest decimal form (0.1, not 0.100000001), as JSON text would.
        let double = F.self == Double.self ? Double(number) : Double(number.description) ?? Double(number)
        return .value(NSNumber(value: double))
    }

    /// An integer as a number (`NSNumber`, signed when it fits in `Int64`).
    static func integer<I: BinaryInteger>(_ value: I) -> EncodedValue {
        if let signed = Int64(exactly: value) { return .value(NSNumber(value: signed)) }
        return .value(NSNumber(value: UInt64(value)))
    }

    /// The key a keyed container writes for `key`, by the key strategy.
    func converted(_ key: any CodingKey, at codingPath: [any CodingKey]) -> String {
        switch options.key {
        case .useDefaultKeys: key.stringValue
        case .convertToSnakeCase: SnakeCase.fromCamelCase(key.stringValue)
        case .custom(let convert): convert(codingPath + [key]).stringValue
        }
    }
}

/// A `[String: Value]` dictionary: its keys are data, not a type's coding keys, so the key
/// strategy leaves them alone.
protocol StringKeyedEncodable {
    func encodeEntries(with encoding: StructureEncoding, at codingPath: [any CodingKey]) throws -> EncodedObject
}

extension Dictionary: StringKeyedEncodable where Key == String, Value: Encodable {
    func encodeEntries(with encoding: StructureEncoding, at codingPath: [any CodingKey]) throws -> EncodedObject {
        let object = EncodedObject()
        for (key, value) in self {
            object.entries[key] = try encoding.boxElement(value, at: codingPath + [StructureKey(stringValue: key)])
        }
        return object
    }
}
