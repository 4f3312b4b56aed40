import CoreTree
import SyncProtocol
import Testing

/// Request numbers, query tags and exactly-once sequences are echoed back or compared exactly, so
/// they are read from their digits, never through a double (found while writing `Tools/fuzz wire`).
@Suite("Wire integers")
struct WireIntegerTests {
    @Test("A request number past Int64 is refused, not answered as its nearest double")
    func requestNumberPastInt64IsRefused() throws {
        let text = #"{"t":"d","d":{"r":99999999999999999999,"a":"p","b":{"p":"/a","d":1}}}"#
        #expect(throws: ProtocolError.self) { try ClientMessage.parse(text) }
    }

    @Test("A request number past a double's precision comes back exactly, not as its neighbour")
    func largeRequestNumberIsExact() throws {
        let text = #"{"t":"d","d":{"r":9007199254740995,"a":"s","b":{}}}"#
        guard case .request(let number, .success) = try ClientMessage.parse(text) else {
            Issue.record("not a request")
            return
        }
        #expect(number == 9_007_199_254_740_995)
    }

    @Test("A request number with a fraction or an exponent is refused", arguments: ["1.0", "1e3", "2.5", "-0.0"])
    func requestNumberMustBeDigits(_ written: String) {
        let text = #"{"t":"d","d":{"r":"# + written + #","a":"s","b":{}}}"#
        #expect(throws: ProtocolError(.malformedFrame, "A request needs an integer request number in d.r, written as digits (no fraction or exponent) within ±2^63.")) {
            try ClientMessage.parse(text)
        }
    }

    @Test("A query tag that is not an exact integer answers the request with invalidArgument", arguments: ["1.5", "9007199254740993.0", "1e2"])
    func tagMustBeAnExactInteger(_ written: String) throws {
        let text = #"{"t":"d","d":{"r":4,"a":"q","b":{"p":"/a","q":{"l":1,"vf":"l"},"t":"# + written + #","h":""}}}"#
        guard case .request(4, .failure(let error)) = try ClientMessage.parse(text) else {
            Issue.record("the request was not answered with an error")
            return
        }
        #expect(error.code == .invalidArgument)
    }

    @Test("An exactly-once sequence is read exactly")
    func stampSequenceIsExact() throws {
        let text = #"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/a","d":1,"once":{"c":"c1","s":9007199254740993,"f":9007199254740993}}}}"#
        guard case .request(5, .success(.put(_, _, _, let stamp?))) = try ClientMessage.parse(text) else {
            Issue.record("not a put with a stamp")
            return
        }
        #expect(stamp.sequence == 9_007_199_254_740_993)
        #expect(stamp.floor == 9_007_199_254_740_993)
    }
}
