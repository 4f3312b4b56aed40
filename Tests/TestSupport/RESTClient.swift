import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A REST response, for tests that check what a server holds.
public struct RESTReply: Sendable {
    public let status: Int
    public let body: String

    /// The body parsed as JSON (`nil` for `null` or non-JSON).
    public var json: Any? {
        let value = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed])
        return value is NSNull ? nil : value
    }
}

/// Sends one HTTP request and returns status and body.
public func restRequest(_ method: String, _ url: String, body: String? = nil, headers: [String: String] = [:]) async throws -> RESTReply {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.timeoutInterval = 20
    if let body { request.httpBody = Data(body.utf8) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    return RESTReply(status: status, body: String(decoding: data, as: UTF8.self))
}
