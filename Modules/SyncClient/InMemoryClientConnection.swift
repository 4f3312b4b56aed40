import SyncProtocol
/// The client's end of an ``InMemoryTransport`` connection.
final class InMemoryClientConnection: TransportConnection {
    private let server: InMemoryServerSide

    init(server: InMemoryServerSide) {
        self.server = server
    }

    var frames: AsyncThrowingStream<String, any Error> { server.clientFrames }

    func send(_ frame: String) async throws {
        try server.clientSent(frame)
    }

    func close() async {
        server.clientClosed()
    }
}
