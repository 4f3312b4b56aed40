/// Reassembles incoming WebSocket frames into whole protocol messages.
///
/// A frame is either a whole JSON envelope, the keep-alive `0`, or a count of at most six digits
/// announcing that the next N frames concatenate into one envelope. Messages larger than the
/// limit are not kept: the assembler drops their text, remembers its beginning (so the receiver
/// can still answer the request it carried) and reports ``Output/tooBig(prefix:)``.
public struct FrameAssembler: Sendable {
    /// What a frame completed.
    public enum Output: Sendable, Equatable {
        /// A whole message.
        case message(String)
        /// The keep-alive frame.
        case keepAlive
        /// Part of a split message; more frames follow.
        case incomplete
        /// A split message longer than the limit; `prefix` is its first bytes.
        case tooBig(prefix: String)
    }

    private let maxMessageBytes: Int
    private var remainingFrames = 0
    private var buffer: [UInt8] = []
    private var prefix: [UInt8] = []
    private var overflowed = false

    /// Makes an assembler that accepts messages up to `maxMessageBytes` of UTF-8.
    public init(maxMessageBytes: Int = WireLimits.maxMessageBytes) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Takes the next frame.
    ///
    /// - Throws: ``ProtocolError`` (`malformedFrame`) for a frame count that is zero or absurd.
    public mutating func receive(_ frame: String) throws(ProtocolError) -> Output {
        if remainingFrames > 0 {
            append(frame)
            remainingFrames -= 1
            if remainingFrames > 0 { return .incomplete }
            return finish()
        }
        if let count = FrameAssembler.frameCount(frame) {
            if count == 0 { return .keepAlive }
            if count == 1 {
                remainingFrames = 1
                return .incomplete
            }
            remainingFrames = count
            return .incomplete
        }
        if frame.utf8.count > maxMessageBytes {
            return .tooBig(prefix: String(decoding: frame.utf8.prefix(256), as: UTF8.self))
        }
        return .message(frame)
    }

    private mutating func append(_ frame: String) {
        if overflowed { return }
        if buffer.count + frame.utf8.count > maxMessageBytes {
            overflowed = true
            prefix = Array(buffer.prefix(256))
            if prefix.count < 256 { prefix += frame.utf8.prefix(256 - prefix.count) }
            buffer = []
            return
        }
        buffer.append(contentsOf: frame.utf8)
    }

    private mutating func finish() -> Output {
        defer {
            buffer = []
            prefix = []
            overflowed = false
        }
        if overflowed { return .tooBig(prefix: String(decoding: prefix, as: UTF8.self)) }
        return .message(String(decoding: buffer, as: UTF8.self))
    }

    /// The frame count a frame announces, if it is one (1 to 6 ASCII digits).
    static func frameCount(_ frame: String) -> Int? {
        let utf8 = frame.utf8
        guard !utf8.isEmpty, utf8.count <= WireLimits.maxFrameCountDigits,
              utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(frame)
    }
}
