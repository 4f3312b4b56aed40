public import CoreTree

/// A query at a location: the unit listened to, cached and tracked.
public struct QuerySpec: Sendable, Hashable, CustomStringConvertible {
    /// The location.
    public var path: TreePath
    /// The parameters.
    public var params: QueryParams

    /// A query at `path` with `params`.
    public init(path: TreePath, params: QueryParams = .default) {
        self.path = path
        self.params = params
    }

    /// The default query (all data) at `path`.
    public static func `default`(at path: TreePath) -> QuerySpec { QuerySpec(path: path) }

    /// The canonical identifier of the parameters (`"default"` for the default query).
    public var identifier: String { params.identifier }

    /// Whether the query loads all data at its location.
    public var loadsAllData: Bool { params.loadsAllData }

    /// Whether this is the default query.
    public var isDefault: Bool { params.isDefault }

    /// The query to listen to on the server: the default query at the path when this one loads all data.
    public var forListening: QuerySpec { QuerySpec(path: path, params: params.forListening) }

    /// A key naming path and parameters together.
    var key: String { path.wireForm + "$" + identifier }

    public var description: String { "\(path.wireForm):\(identifier)" }
}
