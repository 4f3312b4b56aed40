public import SyncClient

extension Database {
    /// Replaces how the client reaches the server, before the client starts (the first
    /// ``reference()``). For tests and tools that watch or disturb the wire; apps never need it.
    @_spi(Testing) public func useTransport(_ transport: any Transport) {
        self.transport = transport
    }
}
