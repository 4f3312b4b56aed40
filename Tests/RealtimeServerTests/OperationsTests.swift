import Foundation
import RealtimeServer
import ServerCore
import Testing

/// `/metrics`, `/.health`, `/.ready` and the console's routes on a running server.
@Suite("Operations endpoints")
struct OperationsTests {
    /// The value of the series `name` (with its labels, as exposed) in `text`.
    private func sample(_ text: String, _ name: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test("Health and readiness answer, and metrics count writes, reads, denials and commits")
    func metricsCountWhatHappened() async throws {
        let server = try await TestServer.start { $0.rulesJSON = #"{"rules":{".read":true,"open":{".write":true}}}"# }
        let base = server.baseURL
        #expect(try await http("GET", "\(base)/.health").status == 200)
        #expect(try await http("GET", "\(base)/.ready").status == 200)

        #expect(try await http("PUT", "\(base)/open/a.json", body: "1").status == 200)
        #expect(try await http("PATCH", "\(base)/open.json", body: #"{"b":2}"#).status == 200)
        #expect(try await http("PUT", "\(base)/closed.json", body: "1").status == 401)
        #expect(try await http("GET", "\(base)/open.json").status == 200)

        let metrics = try await http("GET", "\(base)/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        let text = metrics.body
        #expect(sample(text, #"rtdb_writes_total{transport="rest",result="ok"}"#) == 2)
        #expect(sample(text, #"rtdb_writes_total{transport="rest",result="denied"}"#) == 1)
        #expect(sample(text, #"rtdb_rule_denials_total{operation="write"}"#) == 1)
        #expect(sample(text, #"rtdb_reads_total{transport="rest"}"#) == 1)
        #expect(sample(text, #"rtdb_write_ack_seconds_count{transport="rest"}"#) == 2)
        #expect((sample(text, "rtdb_store_commit_seconds_count") ?? 0) >= 1)
        #expect((sample(text, "rtdb_open_connections") ?? 0) >= 1, "the scrape's own connection")
        #expect(sample(text, #"rtdb_writes_total{transport="websocket",result="ok"}"#) == 0, "series exist before traffic")
        await server.stop()
    }

    @Test("Beyond loopback, /metrics and the console's connections need the admin secret")
    func adminOnlyOffLoopback() async throws {
        let secret = "operations-test-secret-0123456789"
        let server = try await TestServer.start {
            $0.host = "0.0.0.0"
            $0.rulesJSON = #"{"rules":{".read":false,".write":false}}"#
            $0.auth.secret = secret
        }
        let base = server.baseURL
        #expect(try await http("GET", "\(base)/metrics").status == 401)
        #expect(try await http("GET", "\(base)/metrics", headers: ["Authorization": "Bearer \(secret)"]).status == 200)
        #expect(try await http("GET", "\(base)/metrics?auth=owner").status == 401, "owner is refused off loopback")
        #expect(try await http("GET", "\(base)/.console/api/connections").status == 401)
        #expect(try await http("GET", "\(base)/.console/api/connections?auth=\(secret)").status == 200)
        let session = try await http("GET", "\(base)/.console/api/session")
        let fields = session.json as? [String: Any]
        #expect(fields?["adminCredentialRequired"] as? Bool == true)
        #expect(try await http("GET", "\(base)/.health").status == 200, "health says nothing secret")
        await server.stop()
    }

    @Test("The console's page is served with its policy, and its connections view lists open streams")
    func consoleRoutes() async throws {
        let server = try await TestServer.start()
        let base = server.baseURL
        let page = try await http("GET", "\(base)/.console/")
        #expect(page.status == 200)
        #expect(page.body.contains("<html"))
        #expect(page.header("Content-Security-Policy")?.contains("frame-ancestors 'none'") == true)
        #expect(try await http("GET", "\(base)/.console/..%2FPackage.swift").status == 404)
        #expect(try await http("GET", "\(base)/.console/missing.js").status == 404)

        let stream = try await EventStreamSocket(port: server.port, path: "/watched", namespace: "consoletest")
        defer { stream.closeWithFIN() }
        let listing = try await http("GET", "\(base)/.console/api/connections?auth=owner&ns=consoletest")
        let connections = (listing.json as? [String: Any])?["connections"] as? [[String: Any]] ?? []
        #expect(connections.count == 1)
        #expect(connections.first?["transport"] as? String == "eventStream")
        #expect(connections.first?["path"] as? String == "/watched")
        #expect((connections.first?["remoteAddress"] as? String)?.hasPrefix("127.0.0.1:") == true)
        await server.stop()
    }
}
