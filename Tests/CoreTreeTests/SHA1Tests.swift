import CoreTree
import Crypto
import Testing

/// CoreTree's own SHA-1 (used for node hashes without the `SwiftCrypto` trait, as in the fuzz
/// build) gives swift-crypto's digests.
@Suite("SHA-1")
struct SHA1Tests {
    @Test("Known vectors", arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ("The quick brown fox jumps over the lazy dog", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
    ])
    func knownVectors(_ message: String, _ hex: String) {
        let digest: [UInt8] = SHA1.digest(Array(message.utf8))
        var written = ""
        for byte in digest {
            let digits = String(byte, radix: 16)
            written += digits.count == 1 ? "0" + digits : digits
        }
        #expect(written == hex)
    }

    @Test("Every length from 0 to 300 bytes (all padding cases) agrees with swift-crypto")
    func agreesWithSwiftCrypto() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ours: [UInt8] = SHA1.digest(message)
            let theirs: [UInt8] = Array(Insecure.SHA1.hash(data: message))
            #expect(ours == theirs, "length \(length)")
        }
    }
}
