import Foundation
import RealtimeServer
import ServerCore
import Testing

@Suite("Event streams: a client that leaves is forgotten at once")
struct EventStreamLifecycleTests {
    /// A value of about `bytes` bytes, as a JSON string.
    private static func bigValue(_ bytes: Int) -> String { "\"" + String(repeating: "x", count: bytes) + "\"" }

    @Test("Three hundred streams closed by FIN or RST, with a 1 MB write after every batch: none stays listening, nothing stays queued")
    func closedStreamsAreRemoved() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let activity = server.server.activity
        let write = Self.bigValue(1 << 20)
        var highestOpenAfterBatch = 0
        // 12 batches of 25 alternate FIN and RST in both orders; a thousand streams (40 batches)
        // found nothing more and cost CI a minute of CPU.
        for batch in 0..<12 {
            var sockets: [EventStreamSocket] = []
            for _ in 0..<25 { sockets.append(try await EventStreamSocket(port: server.port, path: "/s")) }
            #expect(activity.openEventStreams == 25)
            for (index, socket) in sockets.enumerated() {
                if (index + batch) % 2 == 0 { socket.closeWithFIN() } else { socket.closeWithRST() }
            }
            let reply = try await http("PUT", "\(server.baseURL)/s/big.json?ns=test", body: write)
            #expect(reply.status == 200)
            #expect(try await eventually { activity.openEventStreams == 0 }, "batch \(batch): \(activity.openEventStreams) streams still open")
            highestOpenAfterBatch = max(highestOpenAfterBatch, activity.openEventStreams)
            // Keep the next batch's first event small.
            #expect(try await http("DELETE", "\(server.baseURL)/s/big.json?ns=test").status == 200)
        }
        #expect(highestOpenAfterBatch == 0)
        #expect(try await eventually { activity.outbound.queuedBytes == 0 }, "\(activity.outbound.queuedBytes) bytes still queued")
        // The server still streams to a client that stays.
        let stays = try await EventStreamSocket(port: server.port, path: "/s")
        #expect(activity.openEventStreams == 1)
        stays.closeWithFIN()
        #expect(try await eventually { activity.openEventStreams == 0 })
    }

    @Test("When all clients together pass the server-wide queue cap, the slow stream is cut off and its bytes freed")
    func serverWideCap() async throws {
        let server = try await TestServer.start(maxQueuedBytesTotal: 2 << 20)
        defer { Task { await server.stop() } }
        let activity = server.server.activity
        #expect(activity.outbound.limit == 2 << 20)
        let stalled = try await EventStreamSocket(port: server.port, path: "/t")
        defer { stalled.closeWithRST() }
        let write = Self.bigValue(1 << 20)
        // The stalled client never reads again: once the socket buffers fill, its queue grows
        // until the server-wide cap ends the stream.
        for _ in 0..<64 where activity.openEventStreams > 0 {
            #expect(try await http("PUT", "\(server.baseURL)/t.json?ns=test", body: write).status == 200)
        }
        #expect(try await eventually { activity.openEventStreams == 0 }, "the stalled stream was not cut off")
        #expect(try await eventually { activity.outbound.queuedBytes == 0 })
        // Others are still served.
        #expect(try await http("GET", "\(server.baseURL)/t.json?ns=test&shallow=true").status == 200)
    }
}
