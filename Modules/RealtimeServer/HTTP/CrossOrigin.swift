import HTTPTypes
import Hummingbird
import ServerCore

/// Cross-origin access for browsers: every REST answer (data, errors, event streams) may be read
/// by a page on any origin, and preflights (`OPTIONS`) are answered without touching a namespace.
///
/// `*` is safe here: the REST API takes credentials in the URL (`?auth=`) or the `Authorization`
/// header, never from cookies, so a page can only act with a credential it holds itself.
enum CrossOrigin {
    /// The methods the REST API answers.
    static let methods = "GET, PUT, POST, PATCH, DELETE, OPTIONS"
    /// The request headers the REST API reads, allowed when a preflight does not list its own.
    static let requestHeaders = "Authorization, Content-Type, Accept, Cache-Control, Last-Event-ID, If-Match, If-None-Match, X-Firebase-ETag, X-HTTP-Method-Override"
    /// How long a browser may cache a preflight's answer (seconds).
    static let maxAge = "3600"

    private static let allowOrigin = HTTPField.Name("Access-Control-Allow-Origin")!
    private static let exposeHeaders = HTTPField.Name("Access-Control-Expose-Headers")!
    private static let allowMethods = HTTPField.Name("Access-Control-Allow-Methods")!
    private static let allowHeaders = HTTPField.Name("Access-Control-Allow-Headers")!
    private static let maxAgeName = HTTPField.Name("Access-Control-Max-Age")!
    private static let requestedHeaders = HTTPField.Name("Access-Control-Request-Headers")!

    /// `response` with the headers that let any origin read it (and its ETag).
    static func allowing(_ response: Response) -> Response {
        var response = response
        response.headers[allowOrigin] = "*"
        response.headers[exposeHeaders] = "ETag"
        return response
    }

    /// The answer to a preflight: the methods and headers allowed (the ones it asks for, which the
    /// server ignores when it does not know them), cacheable for an hour.
    static func preflight(_ request: Request) -> Response {
        var headers = HTTPFields()
        headers[allowOrigin] = "*"
        headers[allowMethods] = methods
        headers[allowHeaders] = request.headers[requestedHeaders] ?? requestHeaders
        headers[maxAgeName] = maxAge
        headers[.contentLength] = "0"
        return Response(status: .ok, headers: headers)
    }
}
