import SyncProtocol
/// One open transport connection of a ``PersistentConnection`` and the tasks serving it: a
/// reader (frames in), a writer (frames out, in order) and a keep-alive timer. Each reports to the
/// connection's event stream, tagged with ``attempt``.
struct LiveConnection {
    /// The attempt this connection belongs to.
    let attempt: Int
    /// Reassembles the server's split messages.
    var assembler: FrameAssembler
    /// When the handshake arrived.
    var connectedAt: Duration?
    private let transport: any TransportConnection
    private let outgoing: AsyncStream<String>.Continuation
    private let sendClock: SendClock
    private let tasks: [Task<Void, Never>]

    /// Starts serving `transport`.
    init(
        attempt: Int, transport: any TransportConnection, events: AsyncStream<ConnectionEvent>.Continuation,
        keepAliveInterval: Duration, maxIncomingMessageBytes: Int, clock: ConnectionClock
    ) {
        self.attempt = attempt
        self.transport = transport
        assembler = FrameAssembler(maxMessageBytes: maxIncomingMessageBytes)
        let sendClock = SendClock(clock: clock)
        self.sendClock = sendClock
        let (frames, outgoing) = AsyncStream<String>.makeStream()
        self.outgoing = outgoing
        let reader = Task {
            do {
                for try await frame in transport.frames {
                    events.yield(.frameReceived(attempt: attempt, frame))
                }
                events.yield(.transportClosed(attempt: attempt, nil))
            } catch {
                events.yield(.transportClosed(attempt: attempt, error))
            }
        }
        let writer = Task {
            for await frame in frames {
                do {
                    try await transport.send(frame)
                } catch {
                    events.yield(.transportClosed(attempt: attempt, error))
                    break
                }
            }
            // Everything queued is out (or the connection failed): close.
            await transport.close()
        }
        let keepAlive = Task {
            while !Task.isCancelled {
                let idle = sendClock.idle
                if idle >= keepAliveInterval {
                    events.yield(.keepAliveDue(attempt: attempt))
                    try? await clock.sleep(for: keepAliveInterval)
                } else {
                    try? await clock.sleep(for: keepAliveInterval - idle)
                }
            }
        }
        tasks = [reader, writer, keepAlive]
    }

    /// Sends a message, split into frames when long.
    func send(_ message: String) {
        for frame in FrameSplitter.frames(for: message) { outgoing.yield(frame) }
        sendClock.didSend()
    }

    /// Sends the keep-alive frame `0` if nothing was sent for `interval`.
    func sendKeepAliveIfIdle(_ interval: Duration) {
        guard sendClock.idle >= interval else { return }
        outgoing.yield("0")
        sendClock.didSend()
    }

    /// Closes the connection. When `flush`, what is queued is sent first (the writer closes the
    /// transport once it is drained, or after `flushTimeout` at the latest); otherwise it closes at once.
    func close(flush: Bool, flushTimeout: Duration = .seconds(2), clock: ConnectionClock = .continuous) {
        outgoing.finish()
        let reader = tasks[0], writer = tasks[1], keepAlive = tasks[2]
        reader.cancel()
        keepAlive.cancel()
        let transport = self.transport
        if flush {
            Task {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await writer.value }
                    group.addTask { try? await clock.sleep(for: flushTimeout) }
                    await group.next()
                    group.cancelAll()
                }
                await transport.close()
            }
        } else {
            writer.cancel()
            Task { await transport.close() }
        }
    }
}
