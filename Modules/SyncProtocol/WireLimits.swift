/// Sizes the protocol fixes.
public enum WireLimits {
    /// The largest WebSocket text frame either side sends, in characters; longer messages are
    /// split, announced by a frame holding the number of frames that follow.
    public static let maxFrameSize = 16_384
    /// The longest frame-count announcement (`"12345"`), in characters.
    public static let maxFrameCountDigits = 6
    /// The largest write a WebSocket client may send (16 MB, as the Firebase SDKs allow).
    public static let maxWriteBytes = 16 * 1024 * 1024
    /// The largest message accepted at all: a maximal write plus room for its envelope.
    public static let maxMessageBytes = maxWriteBytes + 64 * 1024
    /// The protocol version spoken.
    public static let protocolVersion = "5"
    /// After this long without sending, a client sends the keep-alive frame `0`.
    public static let keepAliveInterval: Duration = .seconds(45)
}
