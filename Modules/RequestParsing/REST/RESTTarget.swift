/// The target of a REST request, its path and query string, percent-decoded.
///
/// Decoding is strict (``PercentEncoding``): a URL whose path or query string does not decode is
/// refused as a whole, never read as a different path or value.
package struct RESTTarget: Sendable, Equatable {
    /// The decoded path, from its leading `/` (`/users/ada.json`).
    package var path: String
    /// The decoded query parameters; of a name given twice, the first.
    package var parameters: [String: String]

    /// A target with `path` and `parameters` as they are (already decoded).
    package init(path: String, parameters: [String: String]) {
        self.path = path
        self.parameters = parameters
    }

    /// Decodes a request's path and query string as they came in the URL.
    ///
    /// The query string is `name=value` pairs joined by `&`; a pair without `=` has the empty
    /// value, and empty pairs are skipped.
    /// - Parameters:
    ///   - rawPath: the path, percent-encoded.
    ///   - rawQuery: the query string after `?`, percent-encoded, or `nil` for none.
    /// - Throws: ``RequestError`` `badEncoding` when the path, a name or a value does not decode.
    /// - Complexity: O(n) in the length of the URL.
    package init(rawPath: Substring, rawQuery: Substring?) throws(RequestError) {
        path = try PercentEncoding.decode(rawPath, "The path")
        parameters = [:]
        guard let rawQuery else { return }
        // Split on bytes, not characters: a combining mark after "&" or "=" would otherwise form
        // one grapheme cluster with it, and the split would miss it.
        for pairBytes in rawQuery.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let pair = Substring(pairBytes)
            let equals = pair.utf8.firstIndex(of: UInt8(ascii: "="))
            let name = try PercentEncoding.decode(pair[..<(equals ?? pair.endIndex)], "A query parameter's name")
            let value = try equals.map { (equals) throws(RequestError) in
                try PercentEncoding.decode(pair[pair.utf8.index(after: equals)...], "Query parameter \"\(name)\"")
            } ?? ""
            if parameters[name] == nil { parameters[name] = value }
        }
    }
}
