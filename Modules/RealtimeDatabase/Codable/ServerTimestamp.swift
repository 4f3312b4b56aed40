public import Foundation

/// A `Date?` property the server fills in (Firebase's `@ServerTimestamp`).
///
/// Encoded, `nil` is the server-timestamp placeholder (`{".sv": "timestamp"}`), which the server
/// replaces with its own time when it stores the write; a date is written as whole milliseconds
/// since 1970. Decoded, a number is read as milliseconds since 1970, and `null` or a missing key
/// as `nil`.
///
/// ```swift
/// struct Post: Codable {
///     var title: String
///     @ServerTimestamp var updated: Date?
/// }
/// try ref.setValue(from: Post(title: "Hi", updated: nil))   // the server writes its time into `updated`
/// ```
///
/// ``ServerTimestampMilliseconds`` holds the same value as an `Int64` of milliseconds.
@propertyWrapper
public struct ServerTimestamp: Codable, Equatable, Hashable, Sendable {
    /// The timestamp, or `nil` for "the server's time when it stores the write".
    public var wrappedValue: Date?

    /// A wrapper holding `value` (`nil`: the server's time).
    public init(wrappedValue value: Date?) { wrappedValue = value }

    /// Reads a timestamp: milliseconds since 1970, or `null` for `nil`.
    public init(from decoder: any Swift.Decoder) throws {
        let milliseconds = try ServerTimestampCoding.decodeMilliseconds(from: decoder)
        wrappedValue = milliseconds.map { Date(timeIntervalSince1970: $0 / 1000) }
    }

    /// Writes whole milliseconds since 1970, or the server-timestamp placeholder for `nil`.
    public func encode(to encoder: any Swift.Encoder) throws {
        try ServerTimestampCoding.encode(wrappedValue.map { $0.timeIntervalSince1970 * 1000 }, to: encoder)
    }
}

/// The wire form both timestamp wrappers share.
enum ServerTimestampCoding {
    /// The milliseconds a decoder holds, `nil` for `null`.
    static func decodeMilliseconds(from decoder: any Swift.Decoder) throws -> Double? {
        let container = try decoder.singleValueContainer()
        return container.decodeNil() ? nil : try container.decode(Double.self)
    }

    /// Whole milliseconds (toward zero, as Firebase writes them), or the placeholder for `nil`.
    static func encode(_ milliseconds: Double?, to encoder: any Swift.Encoder) throws {
        var container = encoder.singleValueContainer()
        guard let milliseconds else {
            try container.encode([".sv": "timestamp"])
            return
        }
        if let whole = Int64(exactly: milliseconds.rounded(.towardZero)) {
            try container.encode(whole)
        } else {
            try container.encode(milliseconds)
        }
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as a nil `@ServerTimestamp`, as an optional property would (Firebase
    /// throws `keyNotFound` there).
    public func decode(_ type: ServerTimestamp.Type, forKey key: Key) throws -> ServerTimestamp {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestamp(wrappedValue: nil)
    }
}
