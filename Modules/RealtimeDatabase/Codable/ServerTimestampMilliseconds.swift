/// An `Int64?` property of milliseconds since 1970 the server fills in: ``ServerTimestamp`` for
/// code that keeps the server's figure as it is (beyond Firebase, whose wrapper holds only a
/// `Date?`).
///
/// ```swift
/// struct Visit: Codable {
///     @ServerTimestampMilliseconds var at: Int64?
/// }
/// ```
@propertyWrapper
public struct ServerTimestampMilliseconds: Codable, Equatable, Hashable, Sendable {
    /// Milliseconds since 1970, or `nil` for "the server's time when it stores the write".
    public var wrappedValue: Int64?

    /// A wrapper holding `value` (`nil`: the server's time).
    public init(wrappedValue value: Int64?) { wrappedValue = value }

    /// Reads milliseconds since 1970 (rounded to a whole number), or `null` for `nil`.
    public init(from decoder: any Swift.Decoder) throws {
        let milliseconds = try ServerTimestampCoding.decodeMilliseconds(from: decoder)
        wrappedValue = try milliseconds.map { value in
            guard let whole = Int64(exactly: value.rounded()) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "\(value) milliseconds do not fit in Int64."))
            }
            return whole
        }
    }

    /// Writes the milliseconds, or the server-timestamp placeholder for `nil`.
    public func encode(to encoder: any Swift.Encoder) throws {
        try ServerTimestampCoding.encode(wrappedValue.map(Double.init), to: encoder)
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as a nil `@ServerTimestampMilliseconds`.
    public func decode(_ type: ServerTimestampMilliseconds.Type, forKey key: Key) throws -> ServerTimestampMilliseconds {
        try decodeIfPresent(type, forKey: key) ?? ServerTimestampMilliseconds(wrappedValue: nil)
    }
}
