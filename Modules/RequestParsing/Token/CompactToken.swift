package import CoreTree

/// A JWT in the JWS compact form (`header.payload.signature`), split and decoded, nothing
/// verified yet.
///
/// The header and the payload are read with CoreTree's JSON parser, and only here: the verifier
/// picks the key, checks the algorithm and reads the claims from this one reading of the token,
/// so no second parser can see a different header (a repeated `alg` or `kid`) than the checks did.
package struct CompactToken: Sendable {
    /// The longest token accepted, in bytes (16 KiB). Identity-provider tokens are 1 to 3 KB,
    /// Firebase ID tokens with the largest custom claims under 2 KB; anything far longer is refused
    /// before it is decoded.
    package static let maxLength = 16 * 1024

    /// The decoded header, a JSON object.
    package let header: Node
    /// The decoded payload (the claims), a JSON object.
    package let payload: Node
    /// The bytes the signature covers: the first two parts as sent, with the dot between them.
    package let signingInput: ArraySlice<UInt8>
    /// The decoded signature (empty for an unsigned token).
    package let signature: [UInt8]

    /// Splits and decodes `text`.
    ///
    /// - Throws: ``TokenError`` `tooLarge` past ``maxLength``, `malformed` when `text` is not
    ///   three base64url parts or the header or payload is not a JSON object.
    /// - Complexity: O(n) in the token's length.
    package init(_ text: String) throws(TokenError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maxLength else {
            throw TokenError(.tooLarge, "The token is \(bytes.count) bytes long; tokens of at most \(Self.maxLength) bytes are accepted.")
        }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw TokenError(.malformed, "A token is three base64url parts joined by dots (header.payload.signature); this one has \(dots.count + 1).")
        }
        let parts = [bytes[..<dots[0]], bytes[(dots[0] + 1)..<dots[1]], bytes[(dots[1] + 1)...]]
        header = try Self.object(parts[0], "header")
        payload = try Self.object(parts[1], "payload")
        guard let signature = Base64URL.decode(parts[2]) else {
            throw TokenError(.malformed, "The token's signature is not base64url (A-Z a-z 0-9 - _, no padding).")
        }
        self.signature = signature
        signingInput = bytes[..<dots[1]]
    }

    /// The JSON object a base64url part holds.
    private static func object(_ part: ArraySlice<UInt8>, _ name: String) throws(TokenError) -> Node {
        guard !part.isEmpty, let json = Base64URL.decode(part) else {
            throw TokenError(.malformed, "The token's \(name) is not base64url (A-Z a-z 0-9 - _, no padding).")
        }
        // An array would parse to a node keyed "0", "1", ...: only an object is a header or claims.
        guard json.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "{") else {
            throw TokenError(.malformed, "The token's \(name) is not a JSON object.")
        }
        do {
            return try Node(json: json)
        } catch {
            throw TokenError(.malformed, "The token's \(name) is not valid JSON: \(error.message)", underlying: error)
        }
    }

    /// A string member of the header, `nil` when it is absent.
    ///
    /// - Throws: ``TokenError`` `malformed` when the member is there but is not a string.
    package func headerString(_ name: String) throws(TokenError) -> String? {
        let member = header.immediateChild(ChildKey(name))
        if member.isEmpty { return nil }
        guard case .string(let value)? = member.leafValue else {
            throw TokenError(.malformed, "The token header's \(name) must be a string.")
        }
        return value
    }
}
