import SyncProtocol
/// Supplies auth tokens to a ``PersistentConnection``.
///
/// The connection asks for a token before each connect, and again (with `forceRefresh`) after the
/// server rejected or revoked one, or when ``PersistentConnection/refreshAuthToken()`` is called.
public protocol AuthTokenProvider: Sendable {
    /// The current token, or nil to connect unauthenticated.
    ///
    /// A token of three dot-separated parts (a JWT) is sent with `auth`; any other token (such as
    /// the emulator's `owner`) with `gauth`.
    ///
    /// - Parameter forceRefresh: whether a cached token must not be reused.
    /// - Throws: when no token can be obtained now (for example it expired while offline). The
    ///   connection then does not connect, backs off and asks again; queued requests stay queued.
    func token(forceRefresh: Bool) async throws -> String?
}
