import SyncProtocol

/// The framing rules, written plainly from the protocol's description, to check
/// `FrameAssembler` against: a frame of 1 to 6 ASCII digits announces how many frames follow
/// (`0` is a keep-alive), and those frames concatenate into one message; a message over the limit
/// is reported with its first 256 bytes.
struct FramingModel {
    let maxMessageBytes: Int
    private var remaining = 0
    private var collected: [UInt8] = []

    init(maxMessageBytes: Int) { self.maxMessageBytes = maxMessageBytes }

    /// What the assembler must give for `frame` (`nil`: it must refuse it).
    mutating func receive(_ frame: String) -> FrameAssembler.Output? {
        if remaining > 0 {
            collected += frame.utf8
            remaining -= 1
            if remaining > 0 { return .incomplete }
            defer { collected = [] }
            if collected.count > maxMessageBytes { return .tooBig(prefix: Self.prefix(collected)) }
            return .message(String(decoding: collected, as: UTF8.self))
        }
        let utf8 = Array(frame.utf8)
        if !utf8.isEmpty, utf8.count <= 6, utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let count = Int(frame) {
            if count == 0 { return .keepAlive }
            remaining = count
            return .incomplete
        }
        if utf8.count > maxMessageBytes { return .tooBig(prefix: Self.prefix(utf8)) }
        return .message(frame)
    }

    private static func prefix(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(256), as: UTF8.self)
    }
}
