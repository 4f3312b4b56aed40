import CoreTree
import Foundation
import Testing

/// The wire protocol end to end: a real server on loopback, raw protocol clients.
@Suite("WebSocket protocol")
struct WebSocketProtocolTests {
    private func path(_ push: [String: Any]) -> String? { push["p"] as? String }

    @Test("Handshake, listen (data pushed before ok), writes acknowledged and pushed to other listeners")
    func listenAndWrite() async throws {
        let server = try await TestServer.start()
        let listener = WireClient(port: server.port)
        let writer = WireClient(port: server.port)
        let hello = try await listener.first { ($0["d"] as? [String: Any])?["t"] as? String == "h" }
        let handshake = try #require((hello["d"] as? [String: Any])?["d"] as? [String: Any])
        #expect(handshake["v"] as? String == "5")
        #expect(abs(Double(handshake["ts"] as? Int64 ?? 0) - Date().timeIntervalSince1970 * 1000) < 60_000)
        #expect((handshake["s"] as? String)?.isEmpty == false)

        #expect(try await writer.request("p", #"{"p":"/rooms/a","d":{"name":"A","n":1}}"#)["s"] as? String == "ok")
        let listenReply = try await listener.request("q", #"{"p":"/rooms","h":""}"#)
        #expect(listenReply["s"] as? String == "ok")
        let raw = await listener.rawMessages()
        let dataIndex = try #require(raw.firstIndex { $0.contains(#""a":"d""#) && $0.contains(#""name":"A""#) })
        let okIndex = try #require(raw.firstIndex { $0.contains(#""s":"ok","d":{}"#) })
        #expect(dataIndex < okIndex, "the data comes before the listen's ok")

        #expect(try await writer.request("p", #"{"p":"/rooms/b/name","d":"B"}"#)["s"] as? String == "ok")
        #expect(try await writer.request("m", #"{"p":"/rooms/a","d":{"n":2,"extra/deep":true}}"#)["s"] as? String == "ok")
        try await listener.first { message in
            let body = (message["d"] as? [String: Any])?["b"] as? [String: Any]
            return body?["p"] as? String == "rooms/b/name" && body?["d"] as? String == "B"
        }
        try await listener.first { message in
            let data = message["d"] as? [String: Any]
            let body = data?["b"] as? [String: Any]
            return data?["a"] as? String == "m" && body?["p"] as? String == "rooms/a"
                && (body?["d"] as? [String: Any])?["extra/deep"] as? Bool == true
        }
        let get = try await writer.request("g", #"{"p":"/rooms/a","q":{}}"#)
        #expect(((get["d"] as? [String: Any])?["extra"] as? [String: Any])?["deep"] as? Bool == true)
        #expect(try await listener.request("n", #"{"p":"/rooms"}"#)["s"] as? String == "ok")
        let before = await listener.pushes().count
        #expect(try await writer.request("p", #"{"p":"/rooms/c","d":1}"#)["s"] as? String == "ok")
        // The barrier: a push caused by that write was queued for the listener before the
        // writer's acknowledgement, so before the reply to a request the listener sends now.
        _ = try await listener.request("g", #"{"p":"/rooms/c","q":{}}"#)
        #expect(await listener.pushes().count == before, "no pushes after unlisten")
        await listener.close()
        await writer.close()
        await server.stop()
    }

    @Test("Compare-and-set: the right hash writes, a stale hash answers datastale and changes nothing")
    func compareAndSet() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        _ = try await client.request("p", #"{"p":"/counter","d":5}"#)
        let hash = Node(.number(5)).hash
        #expect(try await client.request("p", #"{"p":"/counter","d":6,"h":"\#(hash)"}"#)["s"] as? String == "ok")
        #expect(try await client.request("p", #"{"p":"/counter","d":7,"h":"\#(hash)"}"#)["s"] as? String == "datastale")
        #expect(try await client.request("g", #"{"p":"/counter","q":{}}"#)["d"] as? Int == 6)
        // An absent node has the empty hash.
        #expect(try await client.request("p", #"{"p":"/fresh","d":1,"h":""}"#)["s"] as? String == "ok")
        await client.close()
        await server.stop()
    }

    @Test("onDisconnect writes run exactly once when the connection closes; oc cancels")
    func onDisconnect() async throws {
        let server = try await TestServer.start()
        let watcher = WireClient(port: server.port)
        let leaving = WireClient(port: server.port)
        _ = try await watcher.request("q", #"{"p":"/presence","h":""}"#)
        #expect(try await leaving.request("p", #"{"p":"/presence/ada","d":"online"}"#)["s"] as? String == "ok")
        #expect(try await leaving.request("o", #"{"p":"/presence/ada","d":"offline"}"#)["s"] as? String == "ok")
        #expect(try await leaving.request("om", #"{"p":"/presence","d":{"lastSeen":{".sv":"timestamp"}}}"#)["s"] as? String == "ok")
        #expect(try await leaving.request("o", #"{"p":"/presence/cancelled","d":true}"#)["s"] as? String == "ok")
        #expect(try await leaving.request("oc", #"{"p":"/presence/cancelled","d":null}"#)["s"] as? String == "ok")
        // Invalid onDisconnect data is refused when registered.
        #expect(try await leaving.request("o", #"{"p":"/presence/x","d":{"a.b":1}}"#)["s"] as? String == "invalid_args")
        await leaving.close()
        let data = try await eventually {
            let value = try await watcher.request("g", #"{"p":"/presence","q":{}}"#)["d"] as? [String: Any]
            return value?["ada"] as? String == "offline" && value?["lastSeen"] is Int
        }
        #expect(data)
        let final = try await watcher.request("g", #"{"p":"/presence","q":{}}"#)["d"] as? [String: Any]
        #expect(final?["cancelled"] == nil)
        try await watcher.first { message in
            let body = (message["d"] as? [String: Any])?["b"] as? [String: Any]
            return body?["p"] as? String == "presence/ada" && body?["d"] as? String == "offline"
        }
        // The barrier: the watcher's own write commits after the onDisconnect writes, and every
        // push of an earlier commit is queued before its acknowledgement.
        #expect(try await watcher.request("p", #"{"p":"/barrier","d":1}"#)["s"] as? String == "ok")
        let offlinePushes = await watcher.pushes().filter { ($0.body["p"] as? String) == "presence/ada" && ($0.body["d"] as? String) == "offline" }
        #expect(offlinePushes.count == 1, "the onDisconnect put ran once")
        await watcher.close()
        await server.stop()
    }

    @Test("Tagged query: the window's data is tagged, and children entering and leaving it are pushed as tagged merges")
    func taggedQuery() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        _ = try await client.request("p", #"{"p":"/scores","d":{"a":1,"b":5,"c":3,"d":4}}"#)
        let reply = try await client.request("q", #"{"p":"/scores","q":{"i":".value","l":2,"vf":"r"},"t":7,"h":""}"#)
        #expect(reply["s"] as? String == "ok")
        let initial = try #require(await client.pushes().first { $0.body["t"] as? Int == 7 })
        #expect((initial.body["d"] as? [String: Any])?.keys.sorted() == ["b", "d"])
        // c rises to the top: it enters, d (4) leaves.
        _ = try await client.request("p", #"{"p":"/scores/c","d":10}"#)
        let update = try await client.first { message in
            let data = message["d"] as? [String: Any]
            let body = data?["b"] as? [String: Any]
            return body?["t"] as? Int == 7 && data?["a"] as? String == "m"
        }
        let merged = try #require(((update["d"] as? [String: Any])?["b"] as? [String: Any])?["d"] as? [String: Any])
        #expect(merged["c"] as? Int == 10)
        #expect(merged["d"] is NSNull)
        #expect(merged["a"] == nil, "children outside the window are not sent")
        await client.close()
        await server.stop()
    }

    @Test("Server values resolve on the server, atomically with the write")
    func serverValues() async throws {
        let server = try await TestServer.start()
        let clients = (0..<4).map { _ in WireClient(port: server.port) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask {
                    for _ in 0..<10 {
                        _ = try await client.request("p", #"{"p":"/count","d":{".sv":{"increment":1}}}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await clients[0].request("g", #"{"p":"/count","q":{}}"#)["d"] as? Int == 40)
        _ = try await clients[0].request("p", #"{"p":"/at","d":{".sv":"timestamp"}}"#)
        let stamp = try #require(try await clients[0].request("g", #"{"p":"/at","q":{}}"#)["d"] as? Int64)
        #expect(abs(Double(stamp) - Date().timeIntervalSince1970 * 1000) < 60_000)
        for client in clients { await client.close() }
        await server.stop()
    }

    @Test("Messages over 16384 characters are split and reassembled both ways")
    func largeMessages() async throws {
        let server = try await TestServer.start()
        let client = WireClient(port: server.port)
        let big = String(repeating: "0123456789é", count: 5_000)
        #expect(try await client.request("p", #"{"p":"/big","d":"\#(big)"}"#)["s"] as? String == "ok")
        let reply = try await client.request("g", #"{"p":"/big","q":{}}"#)
        #expect(reply["d"] as? String == big)
        await client.close()
        await server.stop()
    }
}

/// onDisconnect when the TCP connection drops without a WebSocket close.
@Suite("WebSocket drops")
struct WebSocketDropTests {
    @Test("A dropped connection runs its onDisconnect writes")
    func droppedConnection() async throws {
        let server = try await TestServer.start()
        let watcher = WireClient(port: server.port)
        var dropping: StalledSocket? = try await StalledSocket(port: server.port)
        try dropping?.send(#"{"t":"d","d":{"r":1,"a":"o","b":{"p":"/status/dropped","d":"gone"}}}"#)
        // The registration must have arrived before the drop: wait until the server answered it.
        try await dropping?.waitToReceive(#""r":1"#)
        dropping = nil
        _ = dropping
        let ran = try await eventually {
            try await watcher.request("g", #"{"p":"/status/dropped","q":{}}"#)["d"] as? String == "gone"
        }
        #expect(ran)
        await watcher.close()
        await server.stop()
    }
}
