public import CoreTree
public import Foundation

/// What an accepted credential turned out to be (a refused one is a ``TokenError``).
public enum Credential: Sendable, Equatable {
    /// An administrator: rules do not apply.
    case admin
    /// A verified user token: `auth` is the rules' `auth` variable; `expires` when it stops being valid.
    case user(auth: Node, expires: Date?)
}
