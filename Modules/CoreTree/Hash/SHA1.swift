/// SHA-1 (FIPS 180-4) in plain Swift: the node hash's digest when CoreTree is built without the
/// `SwiftCrypto` trait (the fuzz build, an app that wants no swift-crypto). With the trait, the
/// hash uses swift-crypto's, which is faster; `SHA1Tests` checks the two agree.
///
/// SHA-1 serves here as Firebase's data fingerprint for compare-and-set and listens, not as a
/// security measure.
package enum SHA1 {
    /// The 20-byte digest of `message`.
    ///
    /// - Complexity: O(n).
    package static func digest(_ message: [UInt8]) -> [UInt8] {
        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitCount = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitCount >> UInt64(shift))) }
        var words = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let byte = block + index * 4
                words[index] = UInt32(padded[byte]) << 24 | UInt32(padded[byte + 1]) << 16 | UInt32(padded[byte + 2]) << 8
                    | UInt32(padded[byte + 3])
            }
            for index in 16..<80 {
                words[index] = rotated(words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16], by: 1)
            }
            var (a, b, c, d, e) = (state[0], state[1], state[2], state[3], state[4])
            for index in 0..<80 {
                let mixed: UInt32
                let constant: UInt32
                switch index {
                case 0..<20: (mixed, constant) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (mixed, constant) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (mixed, constant) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (mixed, constant) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let next = rotated(a, by: 5) &+ mixed &+ e &+ constant &+ words[index]
                (e, d, c, b, a) = (d, c, rotated(b, by: 30), a, next)
            }
            state[0] &+= a
            state[1] &+= b
            state[2] &+= c
            state[3] &+= d
            state[4] &+= e
        }
        return state.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
    }

    private static func rotated(_ word: UInt32, by count: UInt32) -> UInt32 {
        word << count | word >> (32 - count)
    }
}
