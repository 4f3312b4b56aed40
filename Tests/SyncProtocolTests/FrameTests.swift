import CoreTree
import Testing
@testable import SyncProtocol

@Suite("Frames")
struct FrameTests {
    @Test("A short message is one frame; a long one is a count and frames of at most 16384 that rejoin")
    func splitAndReassemble() throws {
        #expect(FrameSplitter.frames(for: "{\"t\":\"d\"}") == ["{\"t\":\"d\"}"])
        // Multi-byte characters straddle the cut points.
        let long = "{\"t\":\"d\",\"d\":\"" + String(repeating: "aé🙂", count: 9_000) + "\"}"
        let frames = FrameSplitter.frames(for: long)
        let count = try #require(Int(frames[0]))
        #expect(count == frames.count - 1 && count > 1)
        #expect(frames.dropFirst().allSatisfy { $0.utf8.count <= WireLimits.maxFrameSize })
        var assembler = FrameAssembler()
        var outputs: [FrameAssembler.Output] = []
        for frame in frames { outputs.append(try assembler.receive(frame)) }
        #expect(outputs.last == .message(long))
        #expect(outputs.dropLast().allSatisfy { $0 == .incomplete })
    }

    @Test("The keep-alive 0 is recognised and a count of 1 announces one frame")
    func keepAliveAndSingleCount() throws {
        var assembler = FrameAssembler()
        #expect(try assembler.receive("0") == .keepAlive)
        #expect(try assembler.receive("1") == .incomplete)
        #expect(try assembler.receive("{\"a\":1}") == .message("{\"a\":1}"))
        #expect(try assembler.receive("{\"b\":2}") == .message("{\"b\":2}"))
    }

    @Test("A split message over the limit is dropped, keeping its start so its request can be answered")
    func oversizedMessage() throws {
        var assembler = FrameAssembler(maxMessageBytes: 100)
        let message = "{\"t\":\"d\",\"d\":{\"r\":42,\"a\":\"p\",\"b\":{\"p\":\"/x\",\"d\":\"" + String(repeating: "x", count: 300) + "\"}}}"
        let frames = FrameSplitter.frames(for: message, maxFrameSize: 40)
        var last: FrameAssembler.Output = .incomplete
        for frame in frames { last = try assembler.receive(frame) }
        guard case .tooBig(let prefix) = last else {
            Issue.record("expected tooBig, got \(last)")
            return
        }
        #expect(ClientMessage.requestNumber(inPrefix: prefix) == 42)
        // The assembler is usable afterwards.
        #expect(try assembler.receive("{}") == .message("{}"))
    }
}
