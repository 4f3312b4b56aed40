public import Foundation

/// Decides which values an encoder or decoder hands through as they are, instead of coding them
/// (Firebase's hook for its own types; this library's coders produce JSON trees, so a resolver
/// only documents intent).
public protocol StructureCodingPassthroughTypeResolver {
    /// Whether `value` passes through uncoded.
    static func isPassthroughType<T>(_ value: T) -> Bool
}

/// Passes nothing through.
public struct NoPassthroughTypes: StructureCodingPassthroughTypeResolver {
    /// Always false.
    public static func isPassthroughType<T>(_ value: T) -> Bool { false }
}

extension Database {
    /// Encodes `Encodable` values into Foundation trees (`[String: Any]`, `[Any]`, `NSNumber`,
    /// `String`, `NSNull`) that ``DatabaseReference/setValue(_:)`` accepts, as Firebase's
    /// `Database.Encoder` does, with the same strategies.
    // @unchecked, as Firebase's: configure it before sharing it; each call reads the settings once.
    public final class Encoder: @unchecked Sendable {
        /// How dates are written (default: seconds since 2001, `deferredToDate`).
        public typealias DateEncodingStrategy = JSONEncoder.DateEncodingStrategy
        /// How `Data` is written (default: base64).
        public typealias DataEncodingStrategy = JSONEncoder.DataEncodingStrategy
        /// How infinite and NaN numbers are written (default: they throw).
        public typealias NonConformingFloatEncodingStrategy = JSONEncoder.NonConformingFloatEncodingStrategy
        /// How keys are written (default: as declared).
        public typealias KeyEncodingStrategy = JSONEncoder.KeyEncodingStrategy

        /// How dates are written.
        public var dateEncodingStrategy: DateEncodingStrategy = .deferredToDate
        /// How `Data` is written.
        public var dataEncodingStrategy: DataEncodingStrategy = .base64
        /// How infinite and NaN numbers are written.
        public var nonConformingFloatEncodingStrategy: NonConformingFloatEncodingStrategy = .throw
        /// How keys are written.
        public var keyEncodingStrategy: KeyEncodingStrategy = .useDefaultKeys
        /// Context for the types being encoded (`Sendable` values, as Foundation's coders take).
        public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
        /// Values handed through uncoded (see ``StructureCodingPassthroughTypeResolver``).
        public var passthroughTypeResolver: any StructureCodingPassthroughTypeResolver.Type = NoPassthroughTypes.self

        /// An encoder with the default strategies.
        public init() {}

        /// `value` as a Foundation tree.
        public func encode<T: Encodable>(_ value: T) throws -> Any {
            try JSONSerialization.jsonObject(with: try encodeJSON(value), options: [.fragmentsAllowed])
        }

        /// `value` as JSON text, with this encoder's strategies.
        func encodeJSON<T: Encodable>(_ value: T) throws -> Data {
            let json = JSONEncoder()
            json.dateEncodingStrategy = dateEncodingStrategy
            json.dataEncodingStrategy = dataEncodingStrategy
            json.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
            json.keyEncodingStrategy = keyEncodingStrategy
            json.userInfo = userInfo
            return try json.encode(value)
        }
    }

    /// Decodes `Decodable` values from Foundation trees (`snapshot.value`, a `[String: Any]`), as
    /// Firebase's `Database.Decoder` does, with the same strategies.
    // @unchecked, as Firebase's: configure it before sharing it; each call reads the settings once.
    public final class Decoder: @unchecked Sendable {
        /// How dates are read (default: seconds since 2001, `deferredToDate`).
        public typealias DateDecodingStrategy = JSONDecoder.DateDecodingStrategy
        /// How `Data` is read (default: base64).
        public typealias DataDecodingStrategy = JSONDecoder.DataDecodingStrategy
        /// How infinite and NaN numbers are read (default: they throw).
        public typealias NonConformingFloatDecodingStrategy = JSONDecoder.NonConformingFloatDecodingStrategy
        /// How keys are read (default: as declared).
        public typealias KeyDecodingStrategy = JSONDecoder.KeyDecodingStrategy

        /// How dates are read.
        public var dateDecodingStrategy: DateDecodingStrategy = .deferredToDate
        /// How `Data` is read.
        public var dataDecodingStrategy: DataDecodingStrategy = .base64
        /// How infinite and NaN numbers are read.
        public var nonConformingFloatDecodingStrategy: NonConformingFloatDecodingStrategy = .throw
        /// How keys are read.
        public var keyDecodingStrategy: KeyDecodingStrategy = .useDefaultKeys
        /// Context for the types being decoded (`Sendable` values, as Foundation's coders take).
        public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
        /// Values handed through undecoded (see ``StructureCodingPassthroughTypeResolver``).
        public var passthroughTypeResolver: any StructureCodingPassthroughTypeResolver.Type = NoPassthroughTypes.self

        /// A decoder with the default strategies.
        public init() {}

        /// A `T` from a Foundation tree (what `snapshot.value` holds).
        public func decode<T: Decodable>(_ type: T.Type, from structure: Any) throws -> T {
            let data: Data
            if structure is NSNull || JSONSerialization.isValidJSONObject(structure) {
                data = try JSONSerialization.data(withJSONObject: structure, options: [.fragmentsAllowed])
            } else {
                data = try JSONSerialization.data(withJSONObject: [structure], options: [])
                return try decodeJSON([T].self, from: data)[0]
            }
            return try decodeJSON(T.self, from: data)
        }

        /// A `T` from JSON text, with this decoder's strategies.
        func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
            let json = JSONDecoder()
            json.dateDecodingStrategy = dateDecodingStrategy
            json.dataDecodingStrategy = dataDecodingStrategy
            json.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
            json.keyDecodingStrategy = keyDecodingStrategy
            json.userInfo = userInfo
            return try json.decode(T.self, from: data)
        }
    }
}
