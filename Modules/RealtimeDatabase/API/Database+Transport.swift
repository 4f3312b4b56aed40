public import SyncClient
import Dispatch

extension Database {
    /// Replaces how the client reaches the server, before the client starts (the first
    /// ``reference()``). For tests and tools that watch or disturb the wire; apps never need it.
    @_spi(Testing) public func useTransport(_ transport: any Transport) {
        self.transport = transport
    }
}

extension Database {
    /// Returns once the client has handled everything asked of it before this call: the repo
    /// has run every queued API call and connection report, the connection every command the
    /// repo gave it (a write is sent, or held while offline or unauthenticated), and the callback
    /// queue every event raised meanwhile. Tests wait on it to prove something did not happen
    /// (no event, nothing sent) instead of sleeping for a while.
    @_spi(Testing) public func settle() async {
        let repo = repo
        await repo.queue.value {}
        await repo.connection.barrier()
        // What the connection reported while handling those commands, then its callbacks.
        await repo.queue.value {}
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            repo.callbackQueue.async { continuation.resume() }
        }
    }
}
