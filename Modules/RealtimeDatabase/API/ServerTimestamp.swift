public import Foundation

/// A type `@ServerTimestamp` can hold: made from, and turned into, milliseconds since 1970.
public protocol ServerTimestampWrappable {
    /// The value for `milliseconds` since 1970.
    static func wrap(_ milliseconds: Double) throws -> Self
    /// The value as milliseconds since 1970.
    static func unwrap(_ value: Self) throws -> Double
}

extension Date: ServerTimestampWrappable {
    /// The date `milliseconds` after 1970.
    public static func wrap(_ milliseconds: Double) throws -> Date { Date(timeIntervalSince1970: milliseconds / 1000) }
    /// The date as milliseconds since 1970.
    public static func unwrap(_ value: Date) throws -> Double { value.timeIntervalSince1970 * 1000 }
}

extension Int64: ServerTimestampWrappable {
    /// `milliseconds`, rounded.
    public static func wrap(_ milliseconds: Double) throws -> Int64 { Int64(milliseconds.rounded()) }
    /// The value as milliseconds.
    public static func unwrap(_ value: Int64) throws -> Double { Double(value) }
}

/// A timestamp the server fills in: `nil` is written as the server-timestamp placeholder
/// (`{".sv": "timestamp"}`), a stored value is read from its milliseconds since 1970.
@propertyWrapper
public struct ServerTimestamp<Value: ServerTimestampWrappable & Codable>: Codable {
    /// The timestamp, or nil for "the server's time when it stores the write".
    public var wrappedValue: Value?

    /// A wrapper holding `value` (nil: the server's time).
    public init(wrappedValue value: Value?) { wrappedValue = value }

    public init(from decoder: any Swift.Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
        } else {
            wrappedValue = try Value.wrap(try container.decode(Double.self))
        }
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(try Value.unwrap(wrappedValue))
        } else {
            try container.encode([".sv": "timestamp"])
        }
    }
}

extension ServerTimestamp: Equatable where Value: Equatable {}
extension ServerTimestamp: Hashable where Value: Hashable {}
extension ServerTimestamp: Sendable where Value: Sendable {}

extension KeyedDecodingContainer {
    /// A missing key decodes as a nil `@ServerTimestamp`, as an optional property would.
    public func decode<Value>(_ type: ServerTimestamp<Value>.Type, forKey key: Key) throws -> ServerTimestamp<Value> {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
