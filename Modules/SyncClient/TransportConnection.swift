import SyncProtocol
/// One open connection to a server; each frame is one whole WebSocket text message.
public protocol TransportConnection: Sendable {
    /// Sends one text frame.
    ///
    /// - Throws: when the connection is closed or the frame cannot be written.
    func send(_ frame: String) async throws
    /// The text frames from the server; finishes (or throws) when the connection closes.
    var frames: AsyncThrowingStream<String, any Error> { get }
    /// Closes the connection. It does not wait for the other side; ``frames`` finishes soon after.
    func close() async
}
