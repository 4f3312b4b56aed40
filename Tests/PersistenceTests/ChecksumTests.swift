import Persistence
import Testing

/// The row checksum (CRC-32C, computed eight bytes at a time) against its published check value
/// and a bit-by-bit reference, over every length around the 8-byte steps.
@Suite("row checksums")
struct ChecksumTests {
    /// CRC-32C one bit at a time, straight from the polynomial.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    static func stored(_ sealed: [UInt8]) -> UInt32 {
        sealed.suffix(4).enumerated().reduce(0) { $0 | UInt32($1.element) << UInt32(8 * $1.offset) }
    }

    @Test("the check value of \"123456789\" is 0xE3069283")
    func checkValue() {
        #expect(Self.stored(ChecksummedStore.seal(key: [], value: Array("123456789".utf8))) == 0xE306_9283)
    }

    @Test("every length from 0 to 40 matches the bitwise reference, and opens back")
    func matchesReference() throws {
        var state: UInt64 = 7
        func nextByte() -> UInt8 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        for length in 0...40 {
            let key = (0..<(length % 5 + 1)).map { _ in nextByte() }
            let value = (0..<length).map { _ in nextByte() }
            let sealed = ChecksummedStore.seal(key: key, value: value)
            #expect(Self.stored(sealed) == Self.reference(key + value), "length \(length)")
            #expect(try ChecksummedStore.open(key: key, sealed: sealed) == value)
            var damaged = sealed
            if !value.isEmpty {
                damaged[length / 2] ^= 0x10
                #expect(throws: StorageError.self) { try ChecksummedStore.open(key: key, sealed: damaged) }
            }
        }
    }
}

