import Foundation

/// The `Swift.Decoder` a type's `init(from:)` reads from: one tree value at one coding path.
final class StructureDecoder: Swift.Decoder {
    let decoding: StructureDecoding
    /// The tree value here, optionals removed.
    let value: Any
    let codingPath: [any CodingKey]

    init(decoding: StructureDecoding, value: Any, codingPath: [any CodingKey]) {
        self.decoding = decoding
        self.value = TreeValue.unwrapped(value)
        self.codingPath = codingPath
    }

    var userInfo: [CodingUserInfoKey: Any] { decoding.options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try decoding.requireValue(value, KeyedDecodingContainer<Key>.self, at: codingPath)
        guard let entries = TreeValue.object(value) else { throw decoding.mismatch([String: Any].self, value, at: codingPath) }
        return KeyedDecodingContainer(
            StructureKeyedDecodingContainer<Key>(
                decoding: decoding, entries: decoding.convertedKeys(entries, at: codingPath), codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try decoding.requireValue(value, (any UnkeyedDecodingContainer).self, at: codingPath)
        guard let elements = TreeValue.array(value) else { throw decoding.mismatch([Any].self, value, at: codingPath) }
        return StructureUnkeyedDecodingContainer(decoding: decoding, elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        StructureSingleValueDecodingContainer(decoding: decoding, value: value, codingPath: codingPath)
    }
}

struct StructureSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoding: StructureDecoding
    let value: Any
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value is NSNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decoding.unboxBool(value, at: codingPath) }
    func decode(_ type: String.Type) throws -> String { try decoding.unboxString(value, at: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try decoding.unboxDouble(value, at: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try decoding.unboxFloat(value, at: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoding.unboxInteger(value, as: type, at: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoding.unbox(value, as: type, at: codingPath) }
}

struct StructureKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoding: StructureDecoding
    /// The object's entries, keys converted by the key strategy.
    let entries: [String: Any]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

    private func entry(_ key: Key) throws -> Any {
        guard let entry = entries[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value for the key \"\(key.stringValue)\"."))
        }
        return TreeValue.unwrapped(entry)
    }

    private func single(_ key: Key) throws -> StructureSingleValueDecodingContainer {
        StructureSingleValueDecodingContainer(decoding: decoding, value: try entry(key), codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try entry(key) is NSNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try single(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try StructureDecoder(decoding: decoding, value: try entry(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try StructureDecoder(decoding: decoding, value: try entry(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Swift.Decoder {
        StructureDecoder(decoding: decoding, value: entries[StructureKey.super.stringValue] ?? NSNull(), codingPath: codingPath + [StructureKey.super])
    }

    func superDecoder(forKey key: Key) throws -> any Swift.Decoder {
        StructureDecoder(decoding: decoding, value: entries[key.stringValue] ?? NSNull(), codingPath: codingPath + [key])
    }
}

struct StructureUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoding: StructureDecoding
    let elements: [Any]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(decoding: StructureDecoding, elements: [Any], codingPath: [any CodingKey]) {
        self.decoding = decoding
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element's value and path; moves past it only when `read` succeeds.
    private mutating func next<T>(_ type: T.Type, _ read: (Any, [any CodingKey]) throws -> T) throws -> T {
        let path = codingPath + [StructureKey(index: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "The array has no more elements."))
        }
        let result = try read(TreeValue.unwrapped(elements[currentIndex]), path)
        currentIndex += 1
        return result
    }

    private mutating func single<T>(_ type: T.Type, _ read: (StructureSingleValueDecodingContainer) throws -> T) throws -> T {
        let decoding = decoding
        return try next(type) { value, path in try read(StructureSingleValueDecodingContainer(decoding: decoding, value: value, codingPath: path)) }
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, TreeValue.unwrapped(elements[currentIndex]) is NSNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try single(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try single(type) { try $0.decode(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try single(type) { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let decoding = decoding
        return try next(KeyedDecodingContainer<NestedKey>.self) { value, path in
            try StructureDecoder(decoding: decoding, value: value, codingPath: path).container(keyedBy: type)
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let decoding = decoding
        return try next((any UnkeyedDecodingContainer).self) { value, path in
            try StructureDecoder(decoding: decoding, value: value, codingPath: path).unkeyedContainer()
        }
    }

    mutating func superDecoder() throws -> any Swift.Decoder {
        let decoding = decoding
        return try next((any Swift.Decoder).self) { value, path in StructureDecoder(decoding: decoding, value: value, codingPath: path) }
    }
}
