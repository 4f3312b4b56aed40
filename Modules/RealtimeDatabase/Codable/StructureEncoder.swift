import Foundation

/// The `Swift.Encoder` a value's `encode(to:)` writes into: it keeps what was encoded at one
/// coding path as an ``EncodedValue``.
final class StructureEncoder: Swift.Encoder {
    let encoding: StructureEncoding
    let codingPath: [any CodingKey]
    /// What was encoded here; nil until a container is asked for or a value is encoded.
    fileprivate(set) var result: EncodedValue?

    init(encoding: StructureEncoding, codingPath: [any CodingKey]) {
        self.encoding = encoding
        self.codingPath = codingPath
    }

    var userInfo: [CodingUserInfoKey: Any] { encoding.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object: EncodedObject
        switch result {
        case .object(let existing)?: object = existing
        case nil:
            object = EncodedObject()
            result = .object(object)
        default: preconditionFailure("A keyed container was asked for at \(Self.describe(codingPath)), where a value was encoded already.")
        }
        return KeyedEncodingContainer(StructureKeyedEncodingContainer<Key>(encoding: encoding, object: object, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let array: EncodedArray
        switch result {
        case .array(let existing)?: array = existing
        case nil:
            array = EncodedArray()
            result = .array(array)
        default: preconditionFailure("An unkeyed container was asked for at \(Self.describe(codingPath)), where a value was encoded already.")
        }
        return StructureUnkeyedEncodingContainer(encoding: encoding, array: array, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        StructureSingleValueEncodingContainer(encoder: self)
    }

    /// Keeps the single value encoded here.
    fileprivate func set(_ value: EncodedValue) {
        precondition(result == nil, "A second value was encoded at \(Self.describe(codingPath)).")
        result = value
    }

    static func describe(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "the top level" : codingPath.map(\.stringValue).joined(separator: ".")
    }
}

struct StructureSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: StructureEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.set(.value(NSNull())) }
    mutating func encode(_ value: Bool) throws { encoder.set(.value(value)) }
    mutating func encode(_ value: String) throws { encoder.set(.value(value)) }
    mutating func encode(_ value: Double) throws { encoder.set(try encoder.encoding.boxFloat(value, at: codingPath)) }
    mutating func encode(_ value: Float) throws { encoder.set(try encoder.encoding.boxFloat(value, at: codingPath)) }
    mutating func encode(_ value: Int) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int8) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int16) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int32) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int64) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.set(StructureEncoding.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoder.set(try encoder.encoding.boxElement(value, at: codingPath))
    }
}

struct StructureKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: StructureEncoding
    let object: EncodedObject
    let codingPath: [any CodingKey]

    private func put(_ value: EncodedValue, at key: Key) {
        object.entries[encoding.converted(key, at: codingPath)] = value
    }

    mutating func encodeNil(forKey key: Key) throws { put(.value(NSNull()), at: key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.value(value), at: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.value(value), at: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try encoding.boxFloat(value, at: codingPath + [key]), at: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try encoding.boxFloat(value, at: codingPath + [key]), at: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(StructureEncoding.integer(value), at: key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        put(try encoding.boxElement(value, at: codingPath + [key]), at: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        put(.object(nested), at: key)
        return KeyedEncodingContainer(StructureKeyedEncodingContainer<NestedKey>(encoding: encoding, object: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        put(.array(nested), at: key)
        return StructureUnkeyedEncodingContainer(encoding: encoding, array: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Swift.Encoder {
        let encoder = StructureEncoder(encoding: encoding, codingPath: codingPath + [StructureKey.super])
        object.entries[encoding.converted(StructureKey.super, at: codingPath)] = .deferred(encoder)
        return encoder
    }

    mutating func superEncoder(forKey key: Key) -> any Swift.Encoder {
        let encoder = StructureEncoder(encoding: encoding, codingPath: codingPath + [key])
        put(.deferred(encoder), at: key)
        return encoder
    }
}

struct StructureUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoding: StructureEncoding
    let array: EncodedArray
    let codingPath: [any CodingKey]

    var count: Int { array.elements.count }

    private var nextPath: [any CodingKey] { codingPath + [StructureKey(index: count)] }

    mutating func encodeNil() throws { array.elements.append(.value(NSNull())) }
    mutating func encode(_ value: Bool) throws { array.elements.append(.value(value)) }
    mutating func encode(_ value: String) throws { array.elements.append(.value(value)) }
    mutating func encode(_ value: Double) throws { array.elements.append(try encoding.boxFloat(value, at: nextPath)) }
    mutating func encode(_ value: Float) throws { array.elements.append(try encoding.boxFloat(value, at: nextPath)) }
    mutating func encode(_ value: Int) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int8) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int16) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int32) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: Int64) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt8) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt16) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt32) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode(_ value: UInt64) throws { array.elements.append(StructureEncoding.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        array.elements.append(try encoding.boxElement(value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedObject()
        let path = nextPath
        array.elements.append(.object(nested))
        return KeyedEncodingContainer(StructureKeyedEncodingContainer<NestedKey>(encoding: encoding, object: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let path = nextPath
        array.elements.append(.array(nested))
        return StructureUnkeyedEncodingContainer(encoding: encoding, array: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Swift.Encoder {
        let encoder = StructureEncoder(encoding: encoding, codingPath: nextPath)
        array.elements.append(.deferred(encoder))
        return encoder
    }
}
