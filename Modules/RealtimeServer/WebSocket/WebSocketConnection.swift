import Foundation
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import SyncProtocol
import ServerCore

/// Runs one upgraded WebSocket connection: a writer task drains the connection's outbox (splitting
/// long messages into frames), while this task reads frames into the session. When the client
/// closes, drops or times out (missed pings), the session ends exactly once.
enum WebSocketConnection {
    static func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, database: NamespaceDatabase,
        host: String, configuration: ServerConfiguration, activity: ServerActivity, verifier: TokenVerifier, logger: Logger
    ) async {
        activity.webSocketOpened()
        let opened = ContinuousClock.now
        let peer = ConnectionSummary.peer(of: channel)
        logger.log(level: configuration.accessLogLevel, "websocket open", metadata: ["namespace": "\(database.name)", "peer": "\(peer)"])
        var closeReason = "the client closed it"
        let record = activity.directory.open(
            transport: .webSocket, namespace: database.name, remoteAddress: channel.remoteAddress.map(ConnectionSummary.address), caller: .anonymous)
        // At shutdown the client gets a close frame ("going away"); it reconnects with backoff.
        let departure = activity.onShutdown(polite: {
            Task { try? await outbound.close(.goingAway, reason: "The server is shutting down.") }
        })
        defer {
            activity.withdraw(departure)
            activity.webSocketClosed()
            record.close()
        }
        // A reader too slow to keep up is cut off at the socket: the writer may be stuck behind it.
        let outbox = Outbox(maxQueuedBytes: configuration.maxQueuedBytesPerConnection, budget: activity.outbound) {
            logger.warning("disconnecting a client that reads too slowly", metadata: [
                "namespace": "\(database.name)", "peer": "\(ConnectionSummary.peer(of: channel))",
                "queuedBytes": "\(configuration.maxQueuedBytesPerConnection)",
            ])
            activity.metrics.slowClientDisconnected(.webSocket)
            channel.close(promise: nil)
        }
        let subscriber = ConnectionSubscriber(outbox: outbox)
        var session = WebSocketSession(
            database: database, subscriber: subscriber, verifier: verifier,
            limits: .init(
                maxListens: configuration.maxListensPerConnection,
                maxOnDisconnectBytes: configuration.maxOnDisconnectBytesPerConnection,
                exactlyOnceWrites: configuration.exactlyOnceWrites, clock: configuration.clock),
            metrics: activity.metrics, logger: logger)
        outbox.enqueue(ServerMessage.handshake(
            timestamp: database.now(), host: host, sessionID: UUID().uuidString.lowercased(),
            extensions: configuration.exactlyOnceWrites ? [WriteStamp.handshakeExtension] : []))
        let writer = WebSocketOutboxWriter(outbox: outbox, channel: channel)
        // The writer sends from the event loop; it lives as long as the connection is served.
        defer { withExtendedLifetime(writer) {} }
        var recorded = Holdings(caller: .anonymous, listens: 0, onDisconnect: 0)
        do {
            for try await message in inbound.messages(maxSize: WireLimits.maxMessageBytes) {
                if outbox.overflowed { break }
                switch message {
                case .text(let text):
                    await session.receive(text)
                    let holds = Holdings(caller: session.caller, listens: session.listenCount, onDisconnect: session.onDisconnectCount)
                    if holds != recorded {
                        recorded = holds
                        record.update(caller: holds.caller, listens: holds.listens, onDisconnectWrites: holds.onDisconnect)
                    }
                case .binary:
                    outbox.enqueue(ServerMessage.error("Binary messages are not part of the protocol; send JSON text."))
                }
            }
        } catch {
            closeReason = "error: \(error)"
        }
        if outbox.overflowed {
            closeReason = "the client read too slowly"
        } else if activity.isShuttingDown {
            closeReason = "the server is shutting down"
        }
        let elapsed = opened.duration(to: .now)
        logger.log(level: configuration.accessLogLevel, "websocket close", metadata: [
            "namespace": "\(database.name)", "peer": "\(peer)", "reason": "\(closeReason)",
            "seconds": "\(elapsed.components.seconds)",
        ])
        await session.end()
        outbox.finish()
    }

    /// What the connection directory shows of a session, compared to skip unchanged updates.
    private struct Holdings: Equatable {
        let caller: Caller
        let listens: Int
        let onDisconnect: Int
    }
}
