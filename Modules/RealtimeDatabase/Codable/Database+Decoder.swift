public import Foundation

extension Database {
    /// Decodes `Decodable` values from Foundation trees (`snapshot.value`, a `[String: Any]`)
    /// (Firebase's `Database.Decoder`, its `FirebaseDataDecoder`), with the same strategies and
    /// defaults.
    ///
    /// Numbers decode into any numeric type they fit exactly (a `Float` takes the nearest value);
    /// `Date`, `Data`, `URL` and `Decimal` go through their strategies; a value
    /// ``passthroughTypeResolver`` names is returned as it is when it already has the type asked
    /// for; a `[String: Value]` dictionary keeps its keys whatever ``keyDecodingStrategy`` says.
    // @unchecked, as Firebase's class: configure it before sharing it; each call reads the settings once.
    public final class Decoder: @unchecked Sendable {
        /// How `Date` values are read.
        public enum DateDecodingStrategy {
            /// As `Date` decodes itself: seconds since 2001-01-01 (the default).
            case deferredToDate
            /// From seconds since 1970.
            case secondsSince1970
            /// From milliseconds since 1970 (what the server's timestamps hold).
            case millisecondsSince1970
            /// From an ISO 8601 string (RFC 3339, `2024-05-01T12:00:00Z`).
            case iso8601
            /// From a string the formatter parses.
            case formatted(DateFormatter)
            /// As the closure decodes it from the decoder it is given.
            case custom((_ decoder: any Swift.Decoder) throws -> Date)
        }

        /// How `Data` values are read.
        public enum DataDecodingStrategy {
            /// As `Data` decodes itself: from an array of byte values.
            case deferredToData
            /// From a base64 string (the default).
            case base64
            /// The tree holds the `Data` itself (a tree made by an encoder with the `.blob`
            /// strategy; snapshots never hold one).
            case blob
            /// As the closure decodes it from the decoder it is given.
            case custom((_ decoder: any Swift.Decoder) throws -> Data)
        }

        /// How infinite and NaN floating-point values are read.
        public enum NonConformingFloatDecodingStrategy {
            /// Only numbers decode as floating-point values (the default).
            case `throw`
            /// These strings also decode, as infinity, minus infinity and NaN.
            case convertFromString(positiveInfinity: String, negativeInfinity: String, nan: String)
        }

        /// How the keys in the tree are matched to the keys of decoded types.
        public enum KeyDecodingStrategy {
            /// As they are (the default).
            case useDefaultKeys
            /// `snake_case` keys as `camelCase`: the words after the first are capitalized and
            /// the underscores between words dropped (`my_url_value` is `myUrlValue`); leading and
            /// trailing underscores are kept.
            case convertFromSnakeCase
            /// The key the closure returns for the coding path (whose last key is the one in the tree).
            case custom((_ codingPath: [any CodingKey]) -> any CodingKey)
        }

        /// How dates are read (default: `.deferredToDate`).
        public var dateDecodingStrategy: DateDecodingStrategy = .deferredToDate
        /// How `Data` is read (default: `.base64`).
        public var dataDecodingStrategy: DataDecodingStrategy = .base64
        /// How infinite and NaN numbers are read (default: they are not).
        public var nonConformingFloatDecodingStrategy: NonConformingFloatDecodingStrategy = .throw
        /// How keys are read (default: as they are).
        public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
        /// Values returned as they are instead of being decoded (default: none).
        public var passthroughTypeResolver: any StructureCodingPassthroughTypeResolver.Type = NoPassthroughTypes.self
        /// Context for the types being decoded, as their `decoder.userInfo`.
        public var userInfo: [CodingUserInfoKey: Any] = [:]

        /// A decoder with the default strategies.
        public init() {}

        /// A `T` from a Foundation tree (what `snapshot.value` holds; `NSNull` for no data).
        ///
        /// - Throws: `DecodingError` when the tree does not fit `T`: `typeMismatch`,
        ///   `keyNotFound`, `valueNotFound` (`null` where a value is needed), `dataCorrupted` (a
        ///   number that does not fit, a malformed date, base64 or URL string).
        public func decode<T: Decodable>(_ type: T.Type, from structure: Any) throws -> T {
            try StructureDecoding(options: options).unbox(structure, as: T.self, at: [])
        }

        /// The settings as one call reads them.
        struct Options {
            var date: DateDecodingStrategy
            var data: DataDecodingStrategy
            var nonConformingFloat: NonConformingFloatDecodingStrategy
            var key: KeyDecodingStrategy
            var passthrough: any StructureCodingPassthroughTypeResolver.Type
            var userInfo: [CodingUserInfoKey: Any]
        }

        var options: Options {
            Options(
                date: dateDecodingStrategy, data: dataDecodingStrategy, nonConformingFloat: nonConformingFloatDecodingStrategy,
                key: keyDecodingStrategy, passthrough: passthroughTypeResolver, userInfo: userInfo)
        }
    }
}
