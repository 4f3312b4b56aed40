package import CoreTree
package import Foundation

/// The claims of a token whose signature checked out, read with their types and ranges checked,
/// and judged against the configuration and the time.
package struct TokenClaims: Sendable {
    /// The latest time a token may name, 9999-12-31T23:59:59Z in seconds since 1970: far past any
    /// real expiry, and small enough that every clock and timer converts it without overflow.
    package static let latestTime: Double = 253_402_300_799
    /// How far in the future `nbf` and `iat` may be, for clocks that disagree a little.
    package static let allowedClockSkew: Double = 60

    /// The rules' `uid`.
    package let uid: String
    /// When the token stops being valid (`exp`), if it says.
    package let expires: Date?
    /// Every claim, for the rules' `auth.token`.
    package let payload: Node

    /// Reads and checks the claims of `payload`, signed by a key from `source`, at `now`
    /// (seconds since 1970), for a server that requires `issuer` and `audience` when they are set.
    ///
    /// - Throws: ``TokenError``: `invalidClaim` for a time claim that is not a number of seconds
    ///   in `0...latestTime` or an identity claim that is not a non-empty string; `expired`,
    ///   `notYetValid`, `wrongIssuer`, `wrongAudience`, `missingIdentity`, `conflictingIdentity`.
    package init(_ payload: Node, signedBy source: TokenSource, issuer: String?, audience: String?, now: Double) throws(TokenError) {
        let exp = try Self.seconds("exp", in: payload)
        let nbf = try Self.seconds("nbf", in: payload)
        let iat = try Self.seconds("iat", in: payload)
        if let exp, exp <= now { throw TokenError(.expired, "The token expired.") }
        if let nbf, nbf > now + Self.allowedClockSkew {
            throw TokenError(.notYetValid, "The token is not valid yet (its nbf is in the future).")
        }
        if let iat, iat > now + Self.allowedClockSkew {
            throw TokenError(.notYetValid, "The token was issued in the future (its iat); check the issuer's clock.")
        }
        if let issuer, Self.string("iss", in: payload) != issuer {
            throw TokenError(.wrongIssuer, "The token was issued by someone else (its iss is not this server's issuer).")
        }
        if let audience, !Self.audiences(in: payload).contains(audience) {
            throw TokenError(.wrongAudience, "The token is meant for another audience (its aud does not name this server's).")
        }
        uid = try Self.identity(in: payload, signedBy: source)
        expires = exp.map { Date(timeIntervalSince1970: $0) }
        self.payload = payload
    }

    /// The user a token names.
    ///
    /// - An identity provider's token names its user in `sub`, and only there, as OpenID Connect
    ///   says: a `uid` or `user_id` claim beside it is the provider's data, kept in `auth.token`,
    ///   never the user's id (a provider may let users set such claims).
    /// - A token signed with the server's secret names its user in `sub`, `uid` or `user_id`
    ///   (Firebase's custom tokens and the tokens of its legacy token generator carry `uid`).
    ///   Those that are present must agree: none outranks another, so a token cannot name one
    ///   user to a check that reads `sub` and another to the rules.
    ///
    /// Firebase's legacy token generator's `{"v": 0, "d": {"uid": ...}}` form is not read: its
    /// `d.uid` alone names no user here.
    private static func identity(in payload: Node, signedBy source: TokenSource) throws(TokenError) -> String {
        let names = source == .identityProvider ? ["sub"] : ["sub", "uid", "user_id"]
        var found: [(name: String, value: String)] = []
        for name in names {
            let member = payload.immediateChild(ChildKey(name))
            if member.isEmpty { continue }
            guard case .string(let value)? = member.leafValue, !value.isEmpty else {
                throw TokenError(.invalidClaim, "The token's \(name) must be a non-empty string, the user's id.")
            }
            found.append((name, value))
        }
        guard let first = found.first else {
            throw TokenError(
                .missingIdentity,
                source == .identityProvider
                    ? "The token names no user: tokens from the identity provider must carry sub, the user's id."
                    : "The token names no user: it must carry sub (or uid or user_id), the user's id.")
        }
        if let other = found.first(where: { $0.value != first.value }) {
            throw TokenError(
                .conflictingIdentity,
                "The token's \(first.name) and \(other.name) name different users; sign tokens whose user id claims agree.")
        }
        return first.value
    }

    /// A time claim in seconds since 1970, `nil` when absent.
    private static func seconds(_ name: String, in payload: Node) throws(TokenError) -> Double? {
        let member = payload.immediateChild(ChildKey(name))
        if member.isEmpty { return nil }
        guard case .number(let value)? = member.leafValue, value >= 0, value <= latestTime else {
            throw TokenError(
                .invalidClaim,
                "The token's \(name) must be a number of seconds since 1970, from 0 to \(Int(latestTime)) (the end of the year 9999).")
        }
        return value
    }

    /// A string claim, `nil` when absent or not a string.
    private static func string(_ name: String, in payload: Node) -> String? {
        if case .string(let value)? = payload.immediateChild(ChildKey(name)).leafValue { return value }
        return nil
    }

    /// The audiences `aud` names: one string or an array of strings.
    private static func audiences(in payload: Node) -> [String] {
        let aud = payload.immediateChild(ChildKey("aud"))
        if case .string(let value)? = aud.leafValue { return [value] }
        return aud.children.compactMap {
            if case .string(let value)? = $0.value.leafValue { return value }
            return nil
        }
    }

    /// The rules' `auth`: `uid`, `provider` (Firebase's `firebase.sign_in_provider`, else a
    /// `provider` claim, else `custom`) and `token` (every claim).
    package var authVariable: Node {
        func string(_ path: TreePath) -> String? {
            if case .string(let value)? = payload.child(at: path).leafValue { return value }
            return nil
        }
        let provider = string("firebase/sign_in_provider") ?? string("provider") ?? "custom"
        return Node(children: [
            (key: ChildKey("provider"), value: Node(.string(provider))),
            (key: ChildKey("token"), value: payload),
            (key: ChildKey("uid"), value: Node(.string(uid))),
        ])
    }
}
