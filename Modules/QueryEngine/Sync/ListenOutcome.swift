/// How a server listen ended its start: completed (the server sent the data and said ok), or
/// cancelled by the server, with the reason it gave (passed on to the cancel events untouched).
public enum ListenOutcome: Sendable, Hashable {
    /// The server sent the listen's data; the view is complete.
    case complete
    /// The server refused the listen; every listener at the location is cancelled with `reason`.
    case cancelled(reason: String)
}
