import CoreTree
import Foundation
import Testing
@testable import SyncProtocol

@Suite("Messages")
struct MessageTests {
    private func action(_ text: String) throws -> ClientAction {
        guard case .request(_, let result) = try ClientMessage.parse(text) else {
            throw ProtocolError(.malformedFrame, "not a request")
        }
        return try result.get()
    }

    @Test("Every client action parses with its fields")
    func actions() throws {
        guard case .listen(let path, let query, let tag, let hash) = try action(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a/b","q":{"l":2,"vf":"r","i":".key"},"t":7,"h":"abc"}}}"#) else {
            Issue.record("listen"); return
        }
        #expect(path == TreePath(unchecked: "a/b") && tag == 7 && hash == "abc")
        #expect(query.immediateChild("l") == Node(.number(2)))
        guard case .put(_, let data, let putHash, _) = try action(#"{"t":"d","d":{"r":2,"a":"p","b":{"p":"/x","d":{"y":true,"z":null},"h":"H"}}}"#) else {
            Issue.record("put"); return
        }
        #expect(data == Node(children: [(key: ChildKey("y"), value: Node(.bool(true)))]) && putHash == "H")
        guard case .merge(_, let children, _) = try action(#"{"t":"d","d":{"r":3,"a":"m","b":{"p":"/x","d":{"a/b":1,"c":null}}}}"#) else {
            Issue.record("merge"); return
        }
        let sorted = children.sorted { $0.path < $1.path }
        #expect(sorted.map(\.path) == [TreePath(unchecked: "a/b"), TreePath(unchecked: "c")])
        #expect(sorted[1].node.isEmpty, "null in an update removes")
        guard case .onDisconnectCancel(let cancelled) = try action(#"{"t":"d","d":{"r":4,"a":"oc","b":{"p":"/p","d":null}}}"#) else {
            Issue.record("oc"); return
        }
        #expect(cancelled == TreePath(unchecked: "p"))
        guard case .auth(let credential, _, let isGAuth) = try action(#"{"t":"d","d":{"r":5,"a":"gauth","b":{"cred":"owner"}}}"#) else {
            Issue.record("gauth"); return
        }
        #expect(credential == "owner" && isGAuth)
        for name in ["n", "o", "om", "g", "unauth", "s", "appcheck", "unappeck"] {
            let body = name == "om" ? #"{"p":"/a","d":{"b":1}}"# : #"{"p":"/a","d":1}"#
            let parsed = try action(#"{"t":"d","d":{"r":9,"a":""# + name + #"","b":"# + body + "}}")
            #expect(parsed.name == (name == "unappeck" ? "unappcheck" : name))
        }
    }

    @Test("Bad input gives typed errors: malformed JSON, unknown actions, invalid paths and keys")
    func errors() throws {
        #expect(throws: ProtocolError.self) { try ClientMessage.parse("{not json") }
        #expect(throws: ProtocolError.self) { try ClientMessage.parse(#"{"t":"x","d":{}}"#) }
        #expect(throws: ProtocolError.self) { try ClientMessage.parse(#"{"t":"d","d":{"a":"p"}}"#) }
        func failure(_ text: String) throws -> ProtocolError? {
            guard case .request(_, .failure(let error)) = try ClientMessage.parse(text) else { return nil }
            return error
        }
        #expect(try failure(#"{"t":"d","d":{"r":1,"a":"zz","b":{}}}"#)?.code == .unknownAction)
        #expect(try failure(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a/b.c","d":1}}}"#)?.code == .invalidArgument)
        let deep = "/" + (0..<40).map { "k\($0)" }.joined(separator: "/")
        #expect(try failure(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":""# + deep + #"","d":1}}}"#)?.code == .invalidArgument)
        #expect(try failure(#"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":5}}}"#)?.code == .invalidArgument)
        #expect(try failure(#"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","t":"x"}}}"#)?.code == .invalidArgument)
    }

    @Test("Server messages are valid JSON envelopes with paths without a leading slash")
    func serverMessages() throws {
        let push = ServerMessage.dataPush(path: TreePath(unchecked: "a/b"), dataJSON: Node(.string("q\"x")).jsonString(), tag: 3)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(push.utf8)) as? [String: Any])
        let body = try #require((object["d"] as? [String: Any])?["b"] as? [String: Any])
        #expect(body["p"] as? String == "a/b")
        #expect(body["d"] as? String == "q\"x")
        #expect(body["t"] as? Int == 3)
        let merge = ServerMessage.mergePush(path: .root, children: [(TreePath(unchecked: "x/y"), Node(.number(1)))])
        #expect(merge.contains(#""m""#) && merge.contains(#""x/y":1"#))
        let handshake = try #require(try JSONSerialization.jsonObject(with: Data(ServerMessage.handshake(timestamp: 5, host: "h:1", sessionID: "s").utf8)) as? [String: Any])
        #expect(((handshake["d"] as? [String: Any])?["d"] as? [String: Any])?["v"] as? String == "5")
    }

    @Test("An exactly-once stamp (b.once) is read from puts and merges; a malformed one answers the request with an error")
    func writeStamps() throws {
        guard case .put(_, _, _, let stamp) = try action(#"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/x","d":1,"once":{"c":"abc_-9","s":12,"f":10}}}}"#) else {
            Issue.record("put"); return
        }
        #expect(stamp == WriteStamp(client: "abc_-9", sequence: 12, floor: 10))
        guard case .merge(_, _, let mergeStamp) = try action(#"{"t":"d","d":{"r":2,"a":"m","b":{"once":{"f":1,"s":1,"c":"z"},"p":"/x","d":{"a":1}}}}"#) else {
            Issue.record("merge"); return
        }
        #expect(mergeStamp == WriteStamp(client: "z", sequence: 1, floor: 1))
        guard case .put(_, _, _, nil) = try action(#"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/x","d":1}}}"#) else {
            Issue.record("a put without a stamp"); return
        }
        for bad in [#"{"c":"a b","s":1,"f":1}"#, #"{"c":"a","s":0,"f":0}"#, #"{"c":"a","s":2,"f":3}"#, #"{"c":"a","s":1.5,"f":1}"#,
                    #"{"c":"","s":1,"f":1}"#, #""x""#, #"{"s":1,"f":1}"#] {
            guard case .request(4, .failure(let error)) = try ClientMessage.parse(#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/x","d":1,"once":\#(bad)}}}"#) else {
                Issue.record("\(bad) was accepted"); continue
            }
            #expect(error.code == .invalidArgument)
        }
        #expect(WriteStamp(client: "c", sequence: 3, floor: 2).json == #"{"c":"c","s":3,"f":2}"#)
    }

    @Test("The handshake lists the server's extensions only when it has some")
    func handshakeExtensions() throws {
        func fields(_ text: String) throws -> [String: Any] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            return try #require((object["d"] as? [String: Any])?["d"] as? [String: Any])
        }
        #expect(try fields(ServerMessage.handshake(timestamp: 1, host: "h", sessionID: "s"))["ext"] == nil)
        #expect(try fields(ServerMessage.handshake(timestamp: 1, host: "h", sessionID: "s", extensions: ["once"]))["ext"] as? [String] == ["once"])
    }
}
