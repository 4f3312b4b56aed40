public import CoreTree

extension QueryParams {
    /// The query object sent on the wire in a listen's `q` field (empty for the default query):
    /// `sp`/`sn`/`sin` start, `ep`/`en`/`ein` end, `l` limit, `vf` view-from, `i` index.
    public var wireObject: Node {
        var object = Node.empty
        func set(_ key: ChildKey, _ value: Node) { object = object.updatingImmediateChild(key, to: value) }
        if let start {
            set("sp", start.value)  // a null value vanishes; "sin" still marks the bound
            if let name = start.name ?? (start.inclusive ? nil : .max) { set("sn", Node(.string(name.stringValue))) }
            set("sin", Node(.bool(start.inclusive)))
        }
        if let end {
            set("ep", end.value)
            if let name = end.name ?? (end.inclusive ? nil : .min) { set("en", Node(.string(name.stringValue))) }
            set("ein", Node(.bool(end.inclusive)))
        }
        if let limit {
            set("l", Node(.number(Double(limit))))
            set("vf", Node(.string((isViewFromLeft ? ViewFrom.left : .right).rawValue)))
        }
        if let wireName = index.wireName { set("i", Node(.string(wireName))) }
        return object
    }

    /// A canonical text naming the query, usable as a persistence key: `"default"` for queries
    /// equivalent to the default one, else the wire object as JSON with sorted keys.
    public var identifier: String {
        isDefault ? "default" : wireObject.jsonString(format: .export)
    }

    /// Reads a wire query object (`q`), accepting every client's forms of startAfter / endBefore
    /// (`[MAX_NAME]`, `[MAX_KEY]`, `[MIN_NAME]`, with or without `sin` / `ein`).
    ///
    /// - Throws: ``QueryError`` with code `invalidWireForm` for fields of the wrong type.
    public init(wireObject object: Node) throws(QueryError) {
        self.init()
        func string(_ key: ChildKey) throws(QueryError) -> String? {
            let child = object.immediateChild(key)
            if child.isEmpty { return nil }
            guard case .string(let value)? = child.leafValue else {
                throw QueryError(.invalidWireForm, "Query field \"\(key)\" must be a string, not \(child).")
            }
            return value
        }
        func flag(_ key: ChildKey) throws(QueryError) -> Bool {
            let child = object.immediateChild(key)
            if child.isEmpty { return true }
            guard case .bool(let value)? = child.leafValue else {
                throw QueryError(.invalidWireForm, "Query field \"\(key)\" must be true or false, not \(child).")
            }
            return value
        }
        func value(_ key: ChildKey) -> Node { object.immediateChild(key) }
        func name(_ text: String?) -> ChildKey? {
            switch text {
            case nil: nil
            case "[MIN_NAME]"?: .min
            case "[MAX_NAME]"?, "[MAX_KEY]"?: .max
            case let text?: ChildKey(text)
            }
        }
        index = QueryIndex(wireName: try string("i"))
        hasExplicitOrder = index != .priority
        if object.hasChild("sp") || object.hasChild("sn") || object.hasChild("sin") {
            let inclusive = try flag("sin")
            var startName = name(try string("sn"))
            if !inclusive && startName == .max { startName = nil }
            start = Bound(value: value("sp"), name: startName, inclusive: inclusive)
        }
        if object.hasChild("ep") || object.hasChild("en") || object.hasChild("ein") {
            let inclusive = try flag("ein")
            var endName = name(try string("en"))
            if !inclusive && endName == .min { endName = nil }
            end = Bound(value: value("ep"), name: endName, inclusive: inclusive)
        }
        let limitNode = object.immediateChild("l")
        if !limitNode.isEmpty {
            guard case .number(let number)? = limitNode.leafValue, number >= 1, number == number.rounded(), number < 1e15 else {
                throw QueryError(.invalidWireForm, "Query field \"l\" must be a positive integer, not \(limitNode).")
            }
            limit = Int(number)
            switch try string("vf") {
            case "l"?: explicitViewFrom = .left
            case "r"?: explicitViewFrom = .right
            case nil: explicitViewFrom = nil
            case let other?: throw QueryError(.invalidWireForm, "Query field \"vf\" must be \"l\" or \"r\", not \"\(other)\".")
            }
        }
    }
}
