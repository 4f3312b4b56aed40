import CoreTree
import Foundation
import Testing

/// Bad input on the WebSocket gets a clear error, changes nothing and never takes the server down.
@Suite("WebSocket bad input")
struct BadInputTests {
    @Test("Malformed JSON, unknown actions, invalid keys, paths and depth: errors, nothing written, connection usable")
    func rejected() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        _ = try await client.request("p", #"{"p":"/safe","d":"kept"}"#)
        client.sendRaw("{this is not json")
        try await client.first { ($0["d"] as? [String: Any])?["t"] as? String == "e" }
        client.sendRaw(#"{"t":"d","d":{"a":"p","b":{}}}"#)
        #expect(try await client.request("zz", "{}")["s"] as? String == "invalid_args")
        #expect(try await client.request("p", #"{"p":"/safe","d":{"bad.key":1}}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("p", #"{"p":"/sa$fe","d":1}"#)["s"] as? String == "invalid_args")
        let deep = (0..<33).map { "k\($0)" }.joined(separator: "/")
        #expect(try await client.request("p", #"{"p":"/\#(deep)","d":1}"#)["s"] as? String == "invalid_args")
        let longKey = String(repeating: "k", count: 769)
        #expect(try await client.request("p", #"{"p":"/\#(longKey)","d":1}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("p", #"{"p":"/.info/connected","d":true}"#)["s"] as? String == "permission_denied")
        #expect(try await client.request("q", #"{"p":"/safe","q":{"l":-1},"t":1,"h":""}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("m", #"{"p":"/safe","d":{"a":1,"a/b":2}}"#)["s"] as? String == "invalid_args")
        #expect(try await client.request("g", #"{"p":"/safe","q":{}}"#)["d"] as? String == "kept")
        await client.close()
        await server.stop()
    }

    @Test("Strings over 10 MB and writes over 16 MB are refused; nothing written")
    func sizeLimits() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        _ = try await client.request("p", #"{"p":"/safe","d":"kept"}"#)
        let elevenMB = String(repeating: "x", count: 11 * 1024 * 1024)
        #expect(try await client.request("p", #"{"p":"/safe","d":"\#(elevenMB)"}"#, timeout: .seconds(60))["s"] as? String == "invalid_args")
        let parts = (0..<2).map { #""p\#($0)":"\#(String(repeating: "y", count: 9 * 1024 * 1024))""# }.joined(separator: ",")
        #expect(try await client.request("p", #"{"p":"/safe","d":{\#(parts)}}"#, timeout: .seconds(60))["s"] as? String == "too_big")
        #expect(try await client.request("g", #"{"p":"/safe","q":{}}"#)["d"] as? String == "kept")
        await client.close()
        await server.stop()
    }

    @Test("A client that does not read is disconnected once its queue passes the cap; the server goes on")
    func slowReader() async throws {
        let server = try await TestServer.start(maxQueuedBytes: 256 * 1024)
        let writer = WireClient(port: server.port)
        let stalled = try await StalledSocket(port: server.port)
        try stalled.send(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/flood","h":""}}}"#)
        let chunk = String(repeating: "z", count: 60_000)
        for index in 0..<200 {
            _ = try await writer.request("p", #"{"p":"/flood/\#(index % 10)","d":"\#(chunk)"}"#)
        }
        // 12 MB went to a client that reads nothing: more than the kernel's buffers and the cap.
        // Once dropped, the client sees the end of the stream after draining what was in flight.
        let disconnected = try await eventually(timeout: .seconds(20)) { stalled.isClosedByPeer() }
        #expect(disconnected, "the stalled client was disconnected")
        #expect(try await writer.request("g", #"{"p":"/flood/0","q":{}}"#)["d"] as? String == chunk)
        await writer.close()
        await server.stop()
    }
}
