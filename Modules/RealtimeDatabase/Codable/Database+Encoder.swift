public import Foundation

extension Database {
    /// Encodes `Encodable` values into Foundation trees (`[String: Any]`, `[Any]`, `NSNumber`,
    /// `Bool`, `String`, `NSNull`) that ``DatabaseReference/setValue(_:)`` accepts (Firebase's
    /// `Database.Encoder`, its `FirebaseDataEncoder`), with the same strategies and defaults.
    ///
    /// `Date`, `Data`, `URL` and `Decimal` go through their strategies (a URL is written as its
    /// absolute string); a value ``passthroughTypeResolver`` names is put in the tree as it is;
    /// a `[String: Value]` dictionary keeps its keys whatever ``keyEncodingStrategy`` says.
    ///
    /// ```swift
    /// let encoder = Database.Encoder()
    /// encoder.dateEncodingStrategy = .millisecondsSince1970
    /// encoder.keyEncodingStrategy = .convertToSnakeCase
    /// try ref.setValue(from: post, encoder: encoder)
    /// ```
    // @unchecked, as Firebase's class: configure it before sharing it; each call reads the settings once.
    public final class Encoder: @unchecked Sendable {
        /// How `Date` values are written.
        public enum DateEncodingStrategy {
            /// As `Date` encodes itself: seconds since 2001-01-01 (the default).
            case deferredToDate
            /// Seconds since 1970, a number.
            case secondsSince1970
            /// Milliseconds since 1970, a number (what the server's timestamps hold).
            case millisecondsSince1970
            /// An ISO 8601 string (RFC 3339, `2024-05-01T12:00:00Z`).
            case iso8601
            /// A string made by the formatter.
            case formatted(DateFormatter)
            /// Whatever the closure encodes into the encoder it is given (an empty object when
            /// it encodes nothing).
            case custom((Date, any Swift.Encoder) throws -> Void)
        }

        /// How `Data` values are written.
        public enum DataEncodingStrategy {
            /// As `Data` encodes itself: an array of byte values.
            case deferredToData
            /// A base64 string (the default).
            case base64
            /// The `Data` itself, put in the tree as it is. The database stores no binary
            /// values, so ``DatabaseReference/setValue(from:encoder:completion:)`` refuses such
            /// a tree; use it to build trees for other code.
            case blob
            /// Whatever the closure encodes into the encoder it is given (an empty object when
            /// it encodes nothing).
            case custom((Data, any Swift.Encoder) throws -> Void)
        }

        /// How infinite and NaN floating-point values are written (the database stores finite
        /// numbers only).
        public enum NonConformingFloatEncodingStrategy {
            /// Encoding fails with `EncodingError.invalidValue` (the default).
            case `throw`
            /// As the given strings.
            case convertToString(positiveInfinity: String, negativeInfinity: String, nan: String)
        }

        /// How the keys of encoded types are written.
        public enum KeyEncodingStrategy {
            /// As the types declare them (the default).
            case useDefaultKeys
            /// `camelCase` keys as `snake_case`: a word starts at each upper-case letter after a
            /// lower-case one, and at the last upper-case letter of a run followed by a lower-case
            /// one (`myURLValue` is `my_url_value`); leading and trailing underscores are kept.
            case convertToSnakeCase
            /// The key the closure returns for the coding path (whose last key is the one to write).
            case custom((_ codingPath: [any CodingKey]) -> any CodingKey)
        }

        /// How dates are written (default: `.deferredToDate`).
        public var dateEncodingStrategy: DateEncodingStrategy = .deferredToDate
        /// How `Data` is written (default: `.base64`).
        public var dataEncodingStrategy: DataEncodingStrategy = .base64
        /// How infinite and NaN numbers are written (default: they throw).
        public var nonConformingFloatEncodingStrategy: NonConformingFloatEncodingStrategy = .throw
        /// How keys are written (default: as declared).
        public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys
        /// Values put in the tree as they are instead of being encoded (default: none).
        public var passthroughTypeResolver: any StructureCodingPassthroughTypeResolver.Type = NoPassthroughTypes.self
        /// Context for the types being encoded, as their `encoder.userInfo`.
        public var userInfo: [CodingUserInfoKey: Any] = [:]

        /// An encoder with the default strategies.
        public init() {}

        /// `value` as a Foundation tree.
        ///
        /// - Throws: `EncodingError.invalidValue` for a non-finite number under the `.throw`
        ///   strategy, or a top-level value that encodes nothing; any error the value's own
        ///   `encode(to:)` throws.
        public func encode<T: Encodable>(_ value: T) throws -> Any {
            let encoding = StructureEncoding(options: options)
            guard let tree = try encoding.box(value, at: []) else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: [], debugDescription: "The top-level \(T.self) encoded no value."))
            }
            return tree.foundationValue
        }

        /// The settings as one call reads them.
        struct Options {
            var date: DateEncodingStrategy
            var data: DataEncodingStrategy
            var nonConformingFloat: NonConformingFloatEncodingStrategy
            var key: KeyEncodingStrategy
            var passthrough: any StructureCodingPassthroughTypeResolver.Type
            var userInfo: [CodingUserInfoKey: Any]
        }

        var options: Options {
            Options(
                date: dateEncodingStrategy, data: dataEncodingStrategy, nonConformingFloat: nonConformingFloatEncodingStrategy,
                key: keyEncodingStrategy, passthrough: passthroughTypeResolver, userInfo: userInfo)
        }
    }
}
