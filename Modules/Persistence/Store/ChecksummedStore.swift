/// An ``OrderedKeyValueStore`` that stores a CRC-32C of each row's key and value after the value
/// and verifies it on every read, so damage on disk is an error, never data.
///
/// ``StorageEngine`` opens every backend through it (format 2). Rows whose checksum does not
/// match throw ``StorageError/Code-swift.enum/corrupt``. One key may be stored as it is (the
/// format version, which must be readable before the format is known).
public final class ChecksummedStore: OrderedKeyValueStore {
    /// The store underneath, holding the checksummed rows.
    public let base: any OrderedKeyValueStore
    private let unsealedKey: [UInt8]?

    /// Bytes a checksum adds to each value.
    public static let overhead = 4

    /// Wraps `base`; `unsealedKey`, if given, is stored without a checksum.
    public init(_ base: any OrderedKeyValueStore, unsealedKey: [UInt8]? = nil) {
        self.base = base
        self.unsealedKey = unsealedKey
    }

    /// Whether `key` is stored without a checksum (an array comparison, which checks the length
    /// first: no hashing on the hot path).
    func isUnsealed(_ key: [UInt8]) -> Bool { key == unsealedKey }

    /// `value` followed by the checksum of `key` and `value` (little-endian).
    public static func seal(key: [UInt8], value: [UInt8]) -> [UInt8] {
        var sealed = value
        sealed.reserveCapacity(value.count + overhead)
        appendChecksum(to: &sealed, key: key)
        return sealed
    }

    /// Seals `value` where it is: appends the checksum of `key` and `value`, so the row can be
    /// written to ``base`` directly (a bulk writer that makes its values itself saves the copy
    /// ``write(_:durable:)`` makes).
    public static func appendChecksum(to value: inout [UInt8], key: [UInt8]) {
        let crc = CRC32C.checksum(value, continuing: CRC32C.checksum(key))
        for shift in stride(from: 0, to: 32, by: 8) { value.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
    }

    /// The value of a sealed row.
    ///
    /// - Throws: ``StorageError/Code-swift.enum/corrupt`` when the row is too short or its
    ///   checksum does not match.
    public static func open(key: [UInt8], sealed: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= overhead else { throw damaged(key, "is shorter than its checksum") }
        let length = sealed.count - overhead
        var stored: UInt32 = 0
        for index in 0..<overhead { stored |= UInt32(sealed[length + index]) << UInt32(8 * index) }
        let computed = sealed.withUnsafeBufferPointer {
            CRC32C.checksum(UnsafeBufferPointer(rebasing: $0[..<length]), continuing: CRC32C.checksum(key))
        }
        guard stored == computed else { throw damaged(key, "does not match its checksum") }
        var value = sealed
        value.removeLast(overhead)
        return value
    }

    private static func damaged(_ key: [UInt8], _ problem: String) -> StorageError {
        let shown = String(decoding: key.prefix(64), as: UTF8.self)
        return StorageError(.corrupt, "a stored row (key \"\(shown)\") \(problem): the store is damaged; restore it from a backup or move it aside")
    }

    public func get(_ key: [UInt8]) throws -> [UInt8]? {
        guard let sealed = try base.get(key) else { return nil }
        return isUnsealed(key) ? sealed : try ChecksummedStore.open(key: key, sealed: sealed)
    }

    public func scan(_ range: KeyRange, reverse: Bool, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try base.scan(range, reverse: reverse) { key, sealed in
            try body(key, isUnsealed(key) ? sealed : try ChecksummedStore.open(key: key, sealed: sealed))
        }
    }

    public func scanSnapshot(_ range: KeyRange, _ body: ([UInt8], [UInt8]) throws -> Bool) throws {
        try base.scanSnapshot(range) { key, sealed in
            try body(key, isUnsealed(key) ? sealed : try ChecksummedStore.open(key: key, sealed: sealed))
        }
    }

    public func write(_ batch: WriteBatch, durable: Bool) throws {
        var sealed = WriteBatch()
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                sealed.put(key, isUnsealed(key) ? value : ChecksummedStore.seal(key: key, value: value))
            case .delete(let key):
                sealed.delete(key)
            case .deleteRange(let range):
                sealed.deleteRange(range)
            }
        }
        try base.write(sealed, durable: durable)
    }

    /// Writes `batch`, whose values already carry their checksums (``appendChecksum(to:key:)``,
    /// or ``StorageEngine``'s rows made `sealed`), to ``base`` as it is: for a writer that makes
    /// its values itself, which saves the copy of each value ``write(_:durable:)`` makes.
    public func writeSealed(_ batch: WriteBatch, durable: Bool) throws {
        try base.write(batch, durable: durable)
    }

    public func close() throws { try base.close() }
}
