import CoreTree
package import QueryEngine

/// Reads the REST API's query parameters (`orderBy`, `startAt`, `limitToFirst`, …) into
/// ``QueryEngine/QueryParams``. Values are JSON; a bound may carry a key tie-breaker
/// (`startAt=3,"key"`), as the JS SDK's REST client sends.
package enum RESTQuery {
    /// The parameters that filter, each of which needs `orderBy`.
    package static let filterNames = ["startAt", "startAfter", "endAt", "endBefore", "equalTo", "limitToFirst", "limitToLast"]

    /// The query the parameters ask for (the default query when there are none).
    ///
    /// - Throws: ``RequestError`` `invalidParameter` naming the parameter that is not valid.
    package static func params(_ query: [String: String]) throws(RequestError) -> QueryParams {
        var params = QueryParams()
        let hasFilter = filterNames.contains { query[$0] != nil }
        guard let orderBy = query["orderBy"] else {
            if hasFilter {
                throw RequestError(.invalidParameter, "orderBy must be defined when other query parameters are defined")
            }
            return params
        }
        do {
            params = try params.orderedBy(try index(orderBy))
            if let value = query["startAt"] {
                let (bound, name) = try boundValue(value, "startAt")
                params = try params.startingAt(bound, name: name)
            }
            if let value = query["startAfter"] {
                let (bound, name) = try boundValue(value, "startAfter")
                params = try params.startingAfter(bound, name: name)
            }
            if let value = query["endAt"] {
                let (bound, name) = try boundValue(value, "endAt")
                params = try params.endingAt(bound, name: name)
            }
            if let value = query["endBefore"] {
                let (bound, name) = try boundValue(value, "endBefore")
                params = try params.endingBefore(bound, name: name)
            }
            if let value = query["equalTo"] {
                let (bound, name) = try boundValue(value, "equalTo")
                params = try params.equalTo(bound, name: name)
            }
            if let value = query["limitToFirst"] {
                params = try params.limitedToFirst(try limit(value, "limitToFirst"))
            }
            if let value = query["limitToLast"] {
                params = try params.limitedToLast(try limit(value, "limitToLast"))
            }
        } catch let error as RequestError {
            throw error
        } catch let error as QueryError {
            throw RequestError(.invalidParameter, error.message, underlying: error)
        } catch {
            throw RequestError(.invalidParameter, "\(error)", underlying: error)
        }
        return params
    }

    private static func index(_ json: String) throws(RequestError) -> QueryIndex {
        guard case .string(let name)? = (try? Node(jsonString: json))?.leafValue else {
            throw RequestError(.invalidParameter, "orderBy must be a JSON string such as \"$key\", \"$value\", \"$priority\" or \"child/path\", not \(json)")
        }
        switch name {
        case "$key": return .key
        case "$value": return .value
        case "$priority": return .priority
        default:
            do {
                return .child(try TreePath(validating: name))
            } catch {
                throw RequestError(.invalidParameter, "orderBy: \(error.message)")
            }
        }
    }

    private static func limit(_ text: String, _ name: String) throws(RequestError) -> Int {
        guard let value = Int(text), value > 0 else {
            throw RequestError(.invalidParameter, "\(name) must be a positive integer, not \(text)")
        }
        return value
    }

    /// A bound value, and the key after a comma when there is one.
    private static func boundValue(_ text: String, _ name: String) throws(RequestError) -> (Node, ChildKey?) {
        if let node = try? Node(jsonString: text), node.isEmpty || node.isLeaf { return (node, nil) }
        // `value,"key"`: split at the comma before the last JSON string.
        var search = text.endIndex
        while let comma = text[..<search].lastIndex(of: ",") {
            let head = String(text[..<comma])
            let tail = String(text[text.index(after: comma)...])
            if let value = try? Node(jsonString: head), value.isEmpty || value.isLeaf,
               case .string(let key)? = (try? Node(jsonString: tail))?.leafValue {
                return (value, ChildKey(key))
            }
            search = comma
        }
        throw RequestError(.invalidParameter, "\(name) must be a JSON string, number, boolean or null (optionally followed by ,\"key\"), not \(text)")
    }
}
