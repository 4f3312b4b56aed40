import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A REST response for tests.
struct HTTPReply: Sendable {
    let status: Int
    let headers: [String: String]
    let body: String

    /// The body parsed as JSON.
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// Sends one HTTP request.
func http(_ method: String, _ url: String, body: String? = nil, headers: [String: String] = [:],
          timeout: TimeInterval = 20) async throws -> HTTPReply {
    var request = URLRequest(url: URL(string: url)!)
    request.httpMethod = method
    request.timeoutInterval = timeout
    if let body { request.httpBody = Data(body.utf8) }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    var fields: [String: String] = [:]
    for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
    return HTTPReply(status: http.statusCode, headers: fields, body: String(decoding: data, as: UTF8.self))
}
