import CoreTree
import Testing
@testable import SyncClient
import SyncProtocol
import TestSupport

@Suite("Client: writes, gets and restore order")
struct ClientWriteTests {
    @Test("Writes made offline go out in order once connected, with the wire bodies")
    func offlineWritesInOrder() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate(), start: false)
        defer { connection.shutdown() }
        let statuses = Recorder<String>()
        connection.put(path: "a/b", data: .json(#"{"x":1,".priority":2}"#), onComplete: { _ in statuses.append("put1") })
        connection.merge(
            path: "m", children: [(path: "c/d", node: Node(.bool(true))), (path: "gone", node: .empty)],
            onComplete: { _ in statuses.append("merge") })
        connection.put(path: "z", data: Node(.string("last")), hash: "HASH", onComplete: { _ in statuses.append("put2") })
        connection.start()
        let server = try await FakeServer.connect(transport)
        let sent = try await server.nextRequests(3)
        #expect(sent.map(\.name) == ["p", "m", "p"])
        #expect(sent[0].text.contains(#""p":"/a/b""#), "request paths have a leading slash")
        #expect(putFields(sent[0])?.data == .json(#"{"x":1,".priority":2}"#))
        guard case .merge(let path, let children, _) = sent[1].action else {
            Issue.record("not a merge: \(sent[1].text)")
            return
        }
        #expect(path == "m")
        #expect(sent[1].text.contains(#""gone":null"#), "deletions are sent as null")
        #expect(children.sorted { $0.path < $1.path }.map(\.path) == ["c/d", "gone"])
        #expect(putFields(sent[2])?.hash == "HASH")
        // Acks in another order call each callback once.
        server.reply(sent[2])
        server.reply(sent[0])
        server.reply(sent[1], status: .permissionDenied, dataJSON: #""Permission denied""#)
        #expect(await eventually { statuses.all.count == 3 })
        #expect(statuses.all == ["put2", "put1", "merge"])
    }

    @Test("After a drop, unacknowledged writes are re-sent in order and each callback fires once")
    func resendAfterDrop() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let acks = Recorder<Int>()
        for index in 1...3 {
            connection.put(path: TreePath(unchecked: "k\(index)"), data: Node(.number(Double(index))), onComplete: { status in
                if status.isOK { acks.append(index) }
            })
        }
        let first = try await server.nextRequests(3)
        server.reply(first[0])
        #expect(await eventually { acks.all == [1] })
        server.side.drop()
        #expect(await eventually { delegate.disconnectCount == 1 })
        let second = try await FakeServer.connect(transport)
        let resent = try await second.nextRequests(2)
        #expect(resent.compactMap { putFields($0)?.path } == ["k2", "k3"])
        #expect(resent[0].number > first[2].number, "request numbers keep increasing")
        // A late reply with an old request number is ignored.
        second.side.sendReply(first[1].number)
        second.reply(resent[1])
        second.reply(resent[0])
        #expect(await eventually { acks.all.count == 3 })
        #expect(acks.all == [1, 3, 2])
        #expect(try await second.expectSilence())
    }

    @Test("A sent compare-and-set put completes with disconnected when the connection drops; plain puts are re-sent")
    func hashPutDisconnected() async throws {
        let transport = InMemoryTransport()
        let delegate = RecordingDelegate()
        let connection = startConnection(transport, delegate: delegate)
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let statuses = Recorder<(String, RequestStatus)>()
        connection.put(path: "tx", data: Node(.number(1)), hash: "h1", onComplete: { statuses.append(("tx", $0)) })
        connection.put(path: "plain", data: Node(.number(2)), onComplete: { statuses.append(("plain", $0)) })
        _ = try await server.nextRequests(2)
        server.side.drop()
        #expect(await eventually { statuses.all.count == 1 })
        #expect(statuses.all.first?.0 == "tx" && statuses.all.first?.1 == .disconnected)
        let second = try await FakeServer.connect(transport)
        let resent = try await second.nextRequest()
        #expect(putFields(resent)?.path == "plain")
        #expect(try await second.expectSilence())
        // An unsent compare-and-set put stays queued across a drop.
        second.side.drop()
        #expect(await eventually { delegate.disconnectCount == 2 })
        connection.put(path: "later", data: Node(.number(3)), hash: "h2", onComplete: { statuses.append(("later", $0)) })
        let third = try await FakeServer.connect(transport)
        let both = try await third.nextRequests(2)
        #expect(both.compactMap { putFields($0)?.path } == ["plain", "later"])
        #expect(statuses.all.count == 1)
    }

    @Test("purgeOutstandingWrites cancels queued and sent writes and onDisconnect operations")
    func purge() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate(), start: false)
        defer { connection.shutdown() }
        let statuses = Recorder<(String, WireStatus)>()
        connection.put(path: "a", data: Node(.number(1)), onComplete: { statuses.append(("a", $0.status)) })
        connection.merge(path: "b", children: [(path: "c", node: Node(.number(1)))], onComplete: { statuses.append(("b", $0.status)) })
        connection.onDisconnectPut(path: "d", data: Node(.number(1)), onComplete: { statuses.append(("d", $0.status)) })
        connection.purgeOutstandingWrites()
        #expect(await eventually { statuses.all.count == 3 })
        #expect(statuses.all.map(\.0) == ["a", "b", "d"])
        #expect(statuses.all.allSatisfy { $0.1 == .writeCanceled })
        connection.start()
        let server = try await FakeServer.connect(transport)
        #expect(try await server.expectSilence(), "purged writes are never sent")
        // A sent write is purged too, and its late ack is ignored.
        connection.put(path: "e", data: Node(.number(1)), onComplete: { statuses.append(("e", $0.status)) })
        let sent = try await server.nextRequest()
        connection.purgeOutstandingWrites()
        #expect(await eventually { statuses.all.count == 4 })
        server.reply(sent)
        // A later write's ack is handled after the late one: then the late one was ignored.
        connection.put(path: "f", data: Node(.number(1)), onComplete: { statuses.append(("f", $0.status)) })
        server.reply(try await server.nextRequest())
        #expect(await eventually { statuses.all.count == 5 })
        #expect(statuses.all.map(\.0) == ["a", "b", "d", "e", "f"])
        #expect(statuses.all[3].1 == .writeCanceled && statuses.all[4].1 == .ok)
    }

    @Test("Restore order is listens, writes, onDisconnect operations, then gets")
    func restoreOrder() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate(), start: false)
        defer { connection.shutdown() }
        let got = Recorder<Result<Node, RequestFailure>>()
        connection.get(path: "g", query: .empty, onComplete: { got.append($0) })
        connection.onDisconnectPut(path: "o", data: Node(.string("bye")))
        connection.onDisconnectMerge(path: "om", children: [(path: "x", node: .empty)])
        connection.onDisconnectCancel(path: "oc")
        connection.put(path: "p", data: Node(.number(1)))
        connection.listen(ListenRequest(path: "q", query: .empty, identifier: "default", tag: nil), hash: { "" }, onComplete: { _ in })
        connection.start()
        let server = try await FakeServer.connect(transport)
        let sent = try await server.nextRequests(6)
        #expect(sent.map(\.name) == ["q", "p", "o", "om", "oc", "g"])
        #expect(sent[4].text.contains(#""b":{"p":"/oc","d":null}"#))
        #expect(sent[3].text.contains(#""d":{"x":null}"#))
        #expect(sent[5].text.contains(#""b":{"p":"/g","q":{}}"#))
        server.reply(sent[5], dataJSON: #"{"a":{"b":1}}"#)
        #expect(await eventually { got.all.count == 1 })
        #expect(try got.all[0].get() == .json(#"{"a":{"b":1}}"#))
    }

    @Test("A get waits for a connection, is re-sent after a drop, and reports a refusal as a failure")
    func getLifecycle() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let results = Recorder<Result<Node, RequestFailure>>()
        connection.get(path: "a", query: .json(#"{"l":1,"vf":"l"}"#), onComplete: { results.append($0) })
        let first = try await server.nextRequest()
        guard case .get(let path, let query) = first.action else {
            Issue.record("not a get: \(first.text)")
            return
        }
        #expect(path == "a" && query == .json(#"{"l":1,"vf":"l"}"#))
        server.side.drop()
        let second = try await FakeServer.connect(transport)
        let resent = try await second.nextRequest()
        #expect(resent.name == "g")
        second.side.sendMessage(ServerMessage.reply(resent.number, status: .permissionDenied, message: "Permission denied"))
        #expect(await eventually { results.all.count == 1 })
        guard case .failure(let failure)? = results.all.first else {
            Issue.record("expected a failure: \(results.all)")
            return
        }
        #expect(failure == RequestFailure(status: .permissionDenied, message: "Permission denied"))
    }

    @Test("After goOffline a get fails at once with disconnected, and a get still waiting fails when the client goes offline")
    func getsWhileOffline() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let results = Recorder<Result<Node, RequestFailure>>()
        // Sent, unanswered, then the app goes offline: it can never be answered there.
        connection.get(path: "waiting", query: .empty, onComplete: { results.append($0) })
        #expect(try await server.nextRequest().name == "g")
        connection.goOffline()
        #expect(await eventually { results.all.count == 1 })
        // Asked while offline.
        connection.get(path: "later", query: .empty, onComplete: { results.append($0) })
        #expect(await eventually { results.all.count == 2 })
        for result in results.all {
            guard case .failure(let failure) = result else {
                Issue.record("expected a failure: \(result)")
                continue
            }
            #expect(failure.status == .disconnected)
        }
        // Nothing is re-sent when the client comes back.
        connection.goOnline()
        let second = try await FakeServer.connect(transport)
        #expect(try await second.expectSilence())
    }

    @Test("A get that finds no connection within 3 s fails with disconnected; one sent in time waits for its reply")
    func getConnectTimeout() async throws {
        let clock = ManualClock()
        let transport = InMemoryTransport()
        let connection = startConnection(
            transport, delegate: RecordingDelegate(), configuration: fastConfiguration { $0.clock = ConnectionClock(clock) }, start: false)
        defer { connection.shutdown() }
        let results = Recorder<Result<Node, RequestFailure>>()
        connection.get(path: "early", query: .empty, onComplete: { results.append($0) })
        #expect(await eventually { clock.sleeperCount >= 1 })
        clock.advance(by: .milliseconds(2_900))
        #expect(results.all.isEmpty)
        clock.advance(by: .milliseconds(200))
        #expect(await eventually { results.all.count == 1 })
        guard case .failure(let failure)? = results.all.first else {
            Issue.record("expected a failure: \(results.all)")
            return
        }
        #expect(failure.status == .disconnected)
        // A get asked before the connection, sent once it is up, is not timed out.
        connection.get(path: "late", query: .empty, onComplete: { results.append($0) })
        connection.start()
        let server = try await FakeServer.connect(transport)
        let sent = try await server.nextRequest()
        #expect(sent.name == "g" && sent.text.contains("/late"))
        clock.advance(by: .seconds(10))
        server.reply(sent, dataJSON: "7")
        #expect(await eventually { results.all.count == 2 })
        #expect(try results.all[1].get() == Node(.number(7)))
    }

    @Test("A sent onDisconnect operation whose connection drops completes with disconnected; a queued one waits")
    func onDisconnectAcrossDrops() async throws {
        let transport = InMemoryTransport()
        let connection = startConnection(transport, delegate: RecordingDelegate())
        defer { connection.shutdown() }
        let server = try await FakeServer.connect(transport)
        let statuses = Recorder<RequestStatus>()
        connection.onDisconnectPut(path: "presence", data: Node(.bool(false)), onComplete: { statuses.append($0) })
        let sent = try await server.nextRequest()
        #expect(sent.name == "o")
        server.side.drop()
        #expect(await eventually { statuses.all == [.disconnected] })
        let second = try await FakeServer.connect(transport)
        #expect(try await second.expectSilence())
    }
}
