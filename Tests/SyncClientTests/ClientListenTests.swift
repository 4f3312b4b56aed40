import CoreTree
import Synchronization
import Testing
@testable import SyncClient
import SyncProtocol

@Suite("Client: listens and pushes")
struct ClientListenTests {
    private static let tagged = ListenRequest(
        path: "a/b", query: .json(#"{"l":2,"vf":"r","i":"score"}"#), identifier: "i=score&l=2&vf=r", tag: 7)
    private static let plain = ListenRequest(path: "c", query: .empty, identifier: "default", tag: nil)

    @Test("A tagged listen sends q and t; a default one neither; unlisten mirrors it")
    func listenBodies() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        connection.listen(Self.tagged, hash: { "abc" }, onComplete: { _ in })
        connection.listen(Self.plain, hash: { "" }, onComplete: { _ in })
        let sent = try await server.nextRequests(2)
        guard case .listen(let path, let query, let tag, let hash) = sent[0].action else {
            Issue.record("not a listen: \(sent[0].text)")
            return
        }
        #expect(path == "a/b" && tag == 7 && hash == "abc")
        #expect(query == Self.tagged.query)
        #expect(sent[0].text.contains(#""p":"/a/b""#))
        #expect(sent[1].text.contains(#""b":{"p":"/c","h":""}"#), "no q and no t: \(sent[1].text)")
        connection.unlisten(Self.tagged)
        connection.unlisten(Self.plain)
        let unlistens = try await server.nextRequests(2)
        guard case .unlisten(let unPath, let unQuery, let unTag) = unlistens[0].action else {
            Issue.record("not an unlisten: \(unlistens[0].text)")
            return
        }
        #expect(unPath == "a/b" && unTag == 7 && unQuery == Self.tagged.query)
        #expect(unlistens[1].text.contains(#""a":"n","b":{"p":"/c"}"#))
        // Unlisten of something not listened sends nothing.
        connection.unlisten(Self.plain)
        #expect(try await server.expectSilence())
    }

    @Test("Listens are re-sent on every reconnect with a freshly asked hash; each answer is reported")
    func listensRestored() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let counter = Mutex(0)
        let statuses = Recorder<WireStatus>()
        connection.listen(Self.plain, hash: {
            counter.withLock { value in
                value += 1
                return "hash\(value)"
            }
        }, onComplete: { statuses.append($0.status) })
        let server = try await FakeServer.connect(transport)
        let first = try await server.nextRequest()
        guard case .listen(_, _, _, let hash1) = first.action else { Issue.record("not a listen"); return }
        #expect(hash1 == "hash1")
        server.reply(first, dataJSON: "{}")
        #expect(await eventually { statuses.all == [.ok] })
        server.side.drop()
        let second = try await FakeServer.connect(transport)
        let again = try await second.nextRequest()
        guard case .listen(_, _, _, let hash2) = again.action else { Issue.record("not a listen"); return }
        #expect(hash2 == "hash2")
        second.reply(again, dataJSON: #"{"w":["no_index"]}"#)
        #expect(await eventually { statuses.all == [.ok, .ok] })
    }

    @Test("A listen's hash is awaited without holding the connection; requests made meanwhile go out after the listen")
    func hashIsAwaited() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let (gate, open) = AsyncStream<Void>.makeStream()
        connection.listen(Self.plain, hash: {
            for await _ in gate { break }
            return "late"
        }, onComplete: { _ in })
        connection.put(path: "x", data: Node(.number(1)))
        #expect(try await server.expectSilence(), "nothing goes out before the hash is known")
        // The actor is free while it waits: its state can be read.
        #expect(await connection.isConnected)
        open.yield()
        let sent = try await server.nextRequests(2)
        guard case .listen(_, _, _, let hash) = sent[0].action else {
            Issue.record("the listen did not go first: \(sent[0].text)")
            return
        }
        #expect(hash == "late")
        #expect(sent[1].text.contains(#""a":"p""#), "then the put: \(sent[1].text)")
    }

    @Test("A refused listen is dropped and not re-sent")
    func refusedListen() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let statuses = Recorder<RequestStatus>()
        connection.listen(Self.plain, hash: { "" }, onComplete: { statuses.append($0) })
        let sent = try await server.nextRequest()
        server.side.sendMessage(ServerMessage.reply(sent.number, status: .permissionDenied, message: "Permission denied"))
        #expect(await eventually { statuses.all == [RequestStatus(status: .permissionDenied, message: "Permission denied")] })
        server.side.drop()
        let second = try await FakeServer.connect(transport)
        #expect(try await second.expectSilence())
    }

    @Test("Data and merge pushes reach the delegate: tags, no leading slash, nulls kept in merges, empty merges ignored")
    func pushes() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        server.side.sendMessage(#"{"t":"d","d":{"a":"d","b":{"p":"a/b","d":{"x":1,"y":null,"z":{".value":"s",".priority":3}},"t":7}}}"#)
        server.side.sendMessage(#"{"t":"d","d":{"a":"m","b":{"p":"list","d":{"k1":{"n":1},"k2":null,"deep/er":true}}}}"#)
        server.side.sendMessage(#"{"t":"d","d":{"a":"m","b":{"p":"list","d":{}}}}"#)
        server.side.sendMessage(#"{"t":"d","d":{"a":"d","b":{"p":"","d":null}}}"#)
        #expect(await eventually { delegate.pushes.count == 3 })
        let pushes = delegate.pushes
        guard case .overwrite(let data) = pushes[0].push else { Issue.record("not an overwrite"); return }
        #expect(pushes[0].path == "a/b" && pushes[0].tag == 7)
        #expect(data == .json(#"{"x":1,"z":{".value":"s",".priority":3}}"#))
        guard case .merge(let children) = pushes[1].push else { Issue.record("not a merge"); return }
        #expect(pushes[1].path == "list" && pushes[1].tag == nil)
        #expect(children.map(\.path) == ["deep/er", "k1", "k2"])
        #expect(children.map(\.node) == [Node(.bool(true)), .json(#"{"n":1}"#), .empty], "the null member is a deletion")
        guard case .overwrite(let removed) = pushes[2].push else { Issue.record("not an overwrite"); return }
        #expect(pushes[2].path == .root && removed.isEmpty)
    }

    @Test("A message split over many frames is reassembled")
    func splitServerMessage() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.accept(transport)
        server.side.sendHandshake(sessionID: "split")
        let big = String(repeating: "é🙂x", count: 10_000)
        server.side.sendMessage(ServerMessage.dataPush(path: "big", dataJSON: ServerMessage.quoted(big)), maxFrameSize: 1_000)
        server.side.sendFrame("0")
        server.side.sendMessage(ServerMessage.dataPush(path: "small", dataJSON: "1"), maxFrameSize: 5)
        #expect(await eventually { delegate.pushes.count == 2 })
        guard case .overwrite(let data) = delegate.pushes.first?.push else { Issue.record("no push"); return }
        #expect(data == Node(.string(big)))
        #expect(delegate.pushes.map(\.path) == ["big", "small"])
    }

    @Test("A c push revokes every listen at its path")
    func revoked() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let other = ListenRequest(path: "a/b", query: .empty, identifier: "default", tag: nil)
        connection.listen(Self.tagged, hash: { "" }, onComplete: { _ in })
        connection.listen(other, hash: { "" }, onComplete: { _ in })
        connection.listen(Self.plain, hash: { "" }, onComplete: { _ in })
        for request in try await server.nextRequests(3) { server.reply(request, dataJSON: "{}") }
        server.side.sendMessage(ServerMessage.listenRevoked(path: "a/b", queryJSON: nil))
        #expect(await eventually { delegate.events.count { if case .revoked = $0 { true } else { false } } == 2 })
        let revoked = delegate.events.compactMap { if case .revoked(let request, let status) = $0 { (request, status) } else { nil } }
        #expect(revoked.map(\.0) == [Self.tagged, other])
        #expect(revoked.allSatisfy { $0.1 == .permissionDenied })
        server.side.drop()
        let second = try await FakeServer.connect(transport)
        let restored = try await second.nextRequest()
        guard case .listen(let path, _, _, _) = restored.action else { Issue.record("not a listen"); return }
        #expect(path == "c", "only the listen that was not revoked comes back")
        #expect(try await second.expectSilence())
    }
}
