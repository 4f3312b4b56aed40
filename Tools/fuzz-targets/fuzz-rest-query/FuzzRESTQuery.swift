import CoreTree
import FuzzSupport
import QueryEngine
import RequestParsing

/// REST request targets: the bytes are the URL's target (`/path.json?name=value&…`), read as
/// the HTTP server reads them (bytes that are not UTF-8 become U+FFFD first).
///
/// Properties: the target decodes or is refused with `RequestError` `badEncoding`; a decoded
/// target percent-encoded again decodes to the same path and parameters; its parameters give a
/// query or a `RequestError` `invalidParameter`, and the same parameters give the same query.
public func checkRESTTarget(_ input: [UInt8]) {
    let text = String(decoding: input, as: UTF8.self)
    // Bytes, as an HTTP server splits a target: "?" may be followed by a combining mark.
    let question = text.utf8.firstIndex(of: UInt8(ascii: "?"))
    let rawPath = text[..<(question ?? text.endIndex)]
    let rawQuery = question.map { text[text.utf8.index(after: $0)...] }
    let hasPercent = text.utf8.contains(UInt8(ascii: "%"))
    let target: RESTTarget
    do {
        target = try RESTTarget(rawPath: rawPath, rawQuery: rawQuery)
    } catch {
        fuzzRequire(error.code == .badEncoding, "\(text.debugDescription) was refused as \(error.code)")
        fuzzRequire(hasPercent, "\(text.debugDescription) has no % but was refused: \(error.message)")
        return
    }
    if !hasPercent { fuzzRequire(target.path == String(rawPath), "a path without % changed: \(target.path.debugDescription)") }
    let encodedQuery = target.parameters.sorted { $0.key < $1.key }
        .map { PercentEncoding.encode($0.key) + "=" + PercentEncoding.encode($0.value) }
        .joined(separator: "&")
    do {
        let again = try RESTTarget(rawPath: PercentEncoding.encode(target.path)[...], rawQuery: encodedQuery[...])
        // Empty names: a pair "=x" keeps the empty name; encoding keeps it too.
        fuzzRequire(again == target, "\(text.debugDescription) decoded to \(target); encoded again and decoded, \(again)")
    } catch {
        fatalError("\(text.debugDescription) decoded, but its encoding \(encodedQuery.debugDescription) does not: \(error.message)")
    }
    checkQuery(target.parameters)
}

func checkQuery(_ parameters: [String: String]) {
    let params: QueryParams
    do {
        params = try RESTQuery.params(parameters)
    } catch {
        fuzzRequire(error.code == .invalidParameter, "query parameters were refused as \(error.code)")
        return
    }
    do {
        let again = try RESTQuery.params(parameters)
        fuzzRequire(again.wireObject == params.wireObject, "the same parameters gave two queries")
        let fromWire = try QueryParams(wireObject: params.wireObject)
        fuzzRequire(fromWire.wireObject == params.wireObject, "the query \(params.wireObject.jsonString()) does not survive its wire form")
    } catch {
        fatalError("a query read from REST parameters does not read again: \(error)")
    }
}
