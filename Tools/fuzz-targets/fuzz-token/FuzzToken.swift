import CoreTree
import Foundation
import FuzzSupport
import RequestParsing

/// Compact tokens (JWS) and their claims. The first byte picks the mode: `0xFF`, the rest
/// repeated past 16 KiB (a huge token); even, the rest is a token's text as sent; odd, the rest is
/// a header, a payload and a signature separated by `0x00`, base64url-encoded into a token here,
/// so the fuzzer reaches the JSON and claims checks.
///
/// Properties: a token is decoded or refused with a `TokenError` (`tooLarge` past 16 KiB, else
/// `malformed`); a decoded token's parts are the canonical base64url of what it decoded to, and
/// its header and payload are the JSON objects encoded; header members (`alg`, `kid`, `crit`) read
/// as strings or are refused; claims are accepted with a user id and an expiry in range, or
/// refused with the code of a claims check.
public func checkToken(_ input: [UInt8]) {
    guard let control = input.first else { return }
    let rest = Array(input.dropFirst())
    if control == 0xFF {
        var huge = rest.isEmpty ? [UInt8(ascii: "a")] : rest
        while huge.count <= CompactToken.maxLength { huge += huge }
        do {
            _ = try CompactToken(String(decoding: huge, as: UTF8.self))
            fatalError("a token of \(huge.count) bytes was decoded")
        } catch {
            fuzzRequire(error.code == .tooLarge, "a huge token was refused as \(error.code), not tooLarge")
        }
    } else if control & 1 == 0 {
        checkText(String(decoding: rest, as: UTF8.self), built: nil)
    } else {
        let parts = rest.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
        guard parts.count == 3 else { return }
        let text = parts.map(TokenBase64.encode).joined(separator: ".")
        checkText(text, built: (parts[0], parts[1], parts[2]))
    }
}

/// Decodes `text`; `built` holds the parts it was made of, when the harness made it.
func checkText(_ text: String, built: (header: [UInt8], payload: [UInt8], signature: [UInt8])?) {
    let token: CompactToken
    do {
        token = try CompactToken(text)
    } catch {
        fuzzRequire(
            error.code == (text.utf8.count > CompactToken.maxLength ? .tooLarge : .malformed),
            "\(text.debugDescription) was refused as \(error.code): \(error.message)")
        if let built, text.utf8.count <= CompactToken.maxLength {
            fuzzRequire(
                !isJSONObject(built.header) || !isJSONObject(built.payload),
                "a token made of two JSON objects was refused: \(error.message)")
        }
        return
    }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    fuzzRequire(parts.count == 3, "a token of \(parts.count) parts was decoded")
    fuzzRequire(TokenBase64.encode(token.signature) == parts[2], "the signature part is not the canonical encoding of its bytes")
    fuzzRequire(Array(token.signingInput) == Array((parts[0] + "." + parts[1]).utf8), "the signing input is not the first two parts")
    if let built {
        fuzzRequire(token.signature == built.signature, "the signature decoded differently")
        fuzzRequire((try? Node(json: built.header)) == token.header, "the header decoded to another tree")
        fuzzRequire((try? Node(json: built.payload)) == token.payload, "the payload decoded to another tree")
    }
    for name in ["alg", "kid", "crit", "typ"] {
        do {
            _ = try token.headerString(name)
        } catch {
            fuzzRequire(error.code == .malformed, "header member \(name) was refused as \(error.code)")
        }
    }
    checkClaims(token.payload)
}

/// Whether `bytes` parse as a JSON object (what a header and a payload must be).
func isJSONObject(_ bytes: [UInt8]) -> Bool {
    guard bytes.first(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "{") else { return false }
    return (try? Node(json: bytes)) != nil
}

func checkClaims(_ payload: Node) {
    let claimsCodes: Set<TokenError.Code> = [
        .invalidClaim, .expired, .notYetValid, .wrongIssuer, .wrongAudience, .missingIdentity, .conflictingIdentity,
    ]
    for source in [TokenSource.secret, .identityProvider] {
        for (issuer, audience) in [(nil, nil), ("https://issuer.example", "project-1")] as [(String?, String?)] {
            do {
                let claims = try TokenClaims(payload, signedBy: source, issuer: issuer, audience: audience, now: 1_700_000_000)
                fuzzRequire(!claims.uid.isEmpty, "claims were accepted with an empty uid")
                if let expires = claims.expires {
                    let seconds = expires.timeIntervalSince1970
                    fuzzRequire(seconds > 1_700_000_000 && seconds <= TokenClaims.latestTime, "an expiry of \(seconds) was accepted")
                }
                fuzzRequire(
                    claims.authVariable.child(at: "uid").leafValue == .string(claims.uid), "auth.uid is not the token's uid")
            } catch {
                fuzzRequire(claimsCodes.contains(error.code), "claims were refused as \(error.code)")
            }
        }
    }
}
