import QueryEngine
import RequestParsing
import Testing

/// REST paths and query strings are percent-decoded strictly: a URL that does not decode is
/// refused, never read as another path or value (found while writing `Tools/fuzz rest-query`).
@Suite("REST targets")
struct RESTTargetTests {
    @Test("The path and the query parameters' names and values are decoded")
    func decodesPathNamesAndValues() throws {
        let target = try RESTTarget(rawPath: "/caf%C3%A9/a%2Fb.json", rawQuery: "order%42y=%22age%22&x=a+b&x=second&flag&&=v")
        #expect(target.path == "/café/a/b.json")
        let expected: [String: String] = ["orderBy": "\"age\"", "x": "a+b", "flag": "", "": "v"]
        #expect(target.parameters == expected)
    }

    @Test("Bad percent-encoding is refused", arguments: ["/a%ZZ.json", "/a%2.json", "/a%.json", "/a%C3.json", "/%FF%FE.json", "/a%ED%A0%80.json"])
    func badPathEncodingIsRefused(_ path: String) {
        #expect {
            _ = try RESTTarget(rawPath: path[...], rawQuery: nil)
        } throws: { error in
            (error as? RequestError)?.code == .badEncoding
        }
    }

    @Test("Bad percent-encoding in a query name or value is refused", arguments: ["a=%G0", "a%=1", "orderBy=%22%E2%82%22", "a=100%"])
    func badQueryEncodingIsRefused(_ query: String) {
        #expect {
            _ = try RESTTarget(rawPath: "/a.json", rawQuery: query[...])
        } throws: { error in
            (error as? RequestError)?.code == .badEncoding
        }
    }

    @Test("& and = are found as bytes: a combining mark after them does not hide them (found by Tools/fuzz rest-query)")
    func separatorsFollowedByCombiningMarks() throws {
        let target = try RESTTarget(rawPath: "/a.json", rawQuery: "a=1&\u{301}b=2&c=\u{301}3")
        let expected: [String: String] = ["a": "1", "\u{301}b": "2", "c": "\u{301}3"]
        #expect(target.parameters == expected)
        #expect {
            _ = try RESTTarget(rawPath: "/a.json", rawQuery: "orderBy=%\u{65E}t")
        } throws: { error in
            (error as? RequestError)?.code == .badEncoding
        }
    }

    @Test("Encoding any text and decoding it gives the text back", arguments: ["", "a b+c", "100%", "é/ü?&=#", "\u{0}\u{1F600}"])
    func encodingRoundTrips(_ text: String) throws {
        #expect(try PercentEncoding.decode(PercentEncoding.encode(text)[...], "text") == text)
    }

    @Test("Query parameters give the query, or an invalidParameter error naming the parameter")
    func queryParameters() throws {
        let params = try RESTQuery.params(["orderBy": "\"age\"", "startAt": "3,\"k\"", "limitToFirst": "2"])
        #expect(params.limit == 2)
        #expect {
            _ = try RESTQuery.params(["startAt": "1"])
        } throws: { error in
            (error as? RequestError)?.code == .invalidParameter
        }
        #expect {
            _ = try RESTQuery.params(["orderBy": "\"$key\"", "limitToFirst": "0"])
        } throws: { error in
            (error as? RequestError)?.message == "limitToFirst must be a positive integer, not 0"
        }
    }
}
