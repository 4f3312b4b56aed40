import Foundation
import SyncClient
import SyncProtocol
import Synchronization

/// The auth token the connection sends, set by the app and (with persistence) restored after a restart.
///
/// A JWT whose `exp` claim has passed is withheld: the connection then does not connect, so
/// writes wait in the queue until the app sets a fresh token (the behaviour the Firebase offline
/// page promises), instead of going out unauthenticated and failing the security rules.
final class AuthTokenStore: AuthTokenProvider {
    private struct State {
        var token: String?
        var wasSetByApp = false
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The app's token (`nil` signs out).
    func set(_ token: String?) {
        state.withLock { state in
            state.token = token
            state.wasSetByApp = true
        }
    }

    /// Uses a token restored from disk unless the app has already set one.
    func restore(_ token: String) {
        state.withLock { state in
            if !state.wasSetByApp { state.token = token }
        }
    }

    var current: String? { state.withLock { $0.token } }

    /// Whether the app has set a token (or signed out) in this process.
    var wasSet: Bool { state.withLock { $0.wasSetByApp } }

    func token(forceRefresh: Bool) async throws -> String? {
        guard let token = current else { return nil }
        if let expiry = AuthTokenStore.expiry(ofJWT: token), expiry <= now() {
            throw DatabaseError(.expiredToken, "The auth token expired at \(expiry); set a fresh one with Database.setAuthToken(_:). Writes wait until then.")
        }
        return token
    }

    /// The `exp` claim of a JWT, if the token is one and has it.
    static func expiry(ofJWT token: String) -> Date? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64),
              let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let exp = claims["exp"] as? NSNumber
        else { return nil }
        return Date(timeIntervalSince1970: exp.doubleValue)
    }
}
