public import CoreTree
import QueryEngine
import SecurityRules

/// Who makes a request, as the security rules see it.
public enum Caller: Sendable, Hashable {
    /// An administrator (the `owner` credential on a loopback server, a database secret): rules
    /// do not apply.
    case admin
    /// A user: `auth` is the rules' `auth` variable (`uid`, `provider`, `token`), or nil when
    /// unauthenticated.
    case user(auth: Node?)

    /// An unauthenticated user.
    public static let anonymous = Caller.user(auth: nil)
}

extension RuleQuery {
    /// The query a read with `params` asks for, as `query` in a `.read` rule sees it.
    init(_ params: QueryParams) {
        self.init()
        if params.hasExplicitOrder {
            switch params.index {
            case .key: order = .key
            case .value: order = .value
            case .priority: order = .priority
            case .child(let path): order = .child(path.relativeForm)
            }
        }
        let isEqual = params.start != nil && params.start == params.end
        if isEqual {
            equalTo = params.start?.value.leafValue
        } else {
            startAt = params.start?.value.leafValue
            endAt = params.end?.value.leafValue
        }
        if let limit = params.limit {
            if params.explicitViewFrom == .right { limitToLast = limit } else { limitToFirst = limit }
        }
    }
}
