/// Splits an outgoing message into WebSocket frames of at most ``WireLimits/maxFrameSize``.
///
/// A message that fits is sent as one frame. A longer one is preceded by a frame holding the
/// number of frames that follow, as the Firebase clients expect. Frames are cut on Unicode scalar
/// boundaries, so each frame is valid text.
public enum FrameSplitter {
    /// The frames that carry `message`.
    public static func frames(for message: String, maxFrameSize: Int = WireLimits.maxFrameSize) -> [String] {
        let utf8 = message.utf8
        if utf8.count <= maxFrameSize { return [message] }
        var frames: [String] = []
        var start = utf8.startIndex
        while start != utf8.endIndex {
            var end = utf8.index(start, offsetBy: maxFrameSize, limitedBy: utf8.endIndex) ?? utf8.endIndex
            // Never cut inside a scalar: step back over UTF-8 continuation bytes (10xxxxxx).
            while end != utf8.endIndex && (utf8[end] & 0xC0) == 0x80 { end = utf8.index(before: end) }
            frames.append(String(decoding: utf8[start..<end], as: UTF8.self))
            start = end
        }
        return [String(frames.count)] + frames
    }
}
