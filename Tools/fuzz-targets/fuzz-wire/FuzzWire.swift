import CoreTree
import FuzzSupport
import SyncProtocol

/// WebSocket frames and envelopes: the bytes are frames separated by `0x00` (frames that are not
/// UTF-8 are dropped, as the WebSocket layer refuses them), reassembled by `FrameAssembler` with
/// a small limit and compared with a model of the framing; each whole message goes to
/// `ClientMessage.parse`.
///
/// Properties: the assembler gives what the model gives (frame counts, keep-alives, too-big
/// messages and their prefix); a message is accepted or refused with a `ProtocolError`; a request
/// number is the integer written; an accepted action written back as an envelope
/// (``WireEnvelope``) parses to the same action.
public func checkWire(_ input: [UInt8]) {
    let frames = input.split(separator: 0, omittingEmptySubsequences: false).compactMap {
        String(validating: $0, as: UTF8.self)
    }
    var assembler = FrameAssembler(maxMessageBytes: 512)
    var model = FramingModel(maxMessageBytes: 512)
    for frame in frames {
        let expected = model.receive(frame)
        let output: FrameAssembler.Output
        do {
            output = try assembler.receive(frame)
        } catch {
            fuzzRequire(expected == nil, "the assembler refused \(frame.debugDescription): \(error.message); the model expected \(String(describing: expected))")
            continue
        }
        fuzzRequire(output == expected, "frame \(frame.debugDescription): the assembler gave \(output), the model \(String(describing: expected))")
        if case .message(let text) = output { checkMessage(text) }
    }
}

/// Parses one message and writes an accepted request back.
func checkMessage(_ text: String) {
    let message: ClientMessage
    do {
        message = try ClientMessage.parse(text)
    } catch {
        fuzzRequire(!error.message.isEmpty, "a refusal without a message")
        return
    }
    guard case .request(let number, let result) = message else { return }
    checkNumberWritten(number, in: text)
    guard case .success(let action) = result else { return }
    let envelope = WireEnvelope.request(number, action)
    do {
        let again = try ClientMessage.parse(envelope)
        guard case .request(let numberAgain, .success(let actionAgain)) = again else {
            fatalError("\(envelope) (written from \(text)) parsed to \(again)")
        }
        fuzzRequire(numberAgain == number, "the request number \(number) came back as \(numberAgain)")
        fuzzRequire(
            WireEnvelope.describe(actionAgain) == WireEnvelope.describe(action),
            "\(text) parsed to \(WireEnvelope.describe(action)); written back as \(envelope) it parsed to \(WireEnvelope.describe(actionAgain))")
    } catch {
        fatalError("\(envelope) (written from \(text)) does not parse: \(error.message)")
    }
}

/// A request number is one the message writes as that integer (`"r":` followed by its digits).
func checkNumberWritten(_ number: Int, in text: String) {
    fuzzRequire(text.contains("\(number)"), "request number \(number) does not appear in \(text)")
}
