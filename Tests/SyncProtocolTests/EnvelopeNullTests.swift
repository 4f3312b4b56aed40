import CoreTree
import SyncProtocol
import Testing

/// Envelopes are read by CoreTree's JSON reader: nulls keep their protocol meaning and members
/// may come in any order.
@Suite struct EnvelopeNullTests {
    @Test func aNullStartBoundIsKeptAsAnInclusiveBound() throws {
        let text = #"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/scores","q":{"sp":null,"i":"score","l":2,"vf":"l"},"t":7,"h":""}}}"#
        guard case .request(3, .success(.listen(let path, let query, let tag, _))) = try ClientMessage.parse(text) else {
            Issue.record("not a listen")
            return
        }
        #expect(path == "scores")
        #expect(tag == 7)
        #expect(query.immediateChild("sin") == Node(.bool(true)), "the null bound is still a bound: \(query)")
        #expect(query.immediateChild("i") == Node(.string("score")))
    }

    @Test func aMergesNullMembersAreDeletions() throws {
        let text = #"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":{"x":null,"y/z":2}}}}"#
        guard case .request(1, .success(.merge(_, let children, _))) = try ClientMessage.parse(text) else {
            Issue.record("not a merge")
            return
        }
        let byPath = Dictionary(uniqueKeysWithValues: children.map { ($0.path.wireForm, $0.node) })
        #expect(byPath == ["/x": .empty, "/y/z": Node(.number(2))])
    }

    @Test func theBodyMayComeBeforeTheAction() throws {
        let text = #"{"d":{"b":{"d":{"x":null,"y":1},"p":"/a"},"a":"m","r":4},"t":"d"}"#
        guard case .request(4, .success(.merge(_, let children, _))) = try ClientMessage.parse(text) else {
            Issue.record("not a merge")
            return
        }
        #expect(children.count == 2)
        let put = #"{"t":"d","d":{"b":{"p":"/a","d":{"x":null,"y":1}},"a":"p","r":5}}"#
        guard case .request(5, .success(.put(_, let data, nil, _))) = try ClientMessage.parse(put) else {
            Issue.record("not a put")
            return
        }
        #expect(data == Node(children: ["y": Node(.number(1))]))
    }

    @Test func invalidDataInAKnownRequestIsAnsweredAsThatRequest() throws {
        let text = #"{"t":"d","d":{"r":9,"a":"p","b":{"p":"/a","d":1e999}}}"#
        guard case .request(9, .failure(let error)) = try ClientMessage.parse(text) else {
            Issue.record("not answered as request 9")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(throws: ProtocolError.self) { try ClientMessage.parse(#"{"t":"d","d":{"r":1,"#) }
    }
}
