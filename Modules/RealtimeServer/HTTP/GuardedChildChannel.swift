import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import ServerCore

/// Wraps the server's child channel (HTTP/1 with WebSocket upgrade) so every connection starts
/// with a ``ConnectionGuard`` in front of the HTTP stack and an ``HTTPParseErrorResponder`` right
/// after its decoder; with `tls`, TLS comes first, so the guard counts and answers in plaintext
/// HTTP (its 408, 431 and 503 answers are encrypted like any other).
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let activity: ServerActivity
    let limits: ConnectionGuard.Limits
    let warnings: LimitWarnings
    let tls: NIOSSLContext?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            let operations = channel.pipeline.syncOperations
            let connectionGuard = ConnectionGuard(activity: activity, limits: limits, warnings: warnings)
            if let tls {
                let encryption = NIOSSLServerHandler(context: tls)
                try operations.addHandler(encryption, position: .first)
                try operations.addHandler(connectionGuard, position: .after(encryption))
            } else {
                try operations.addHandler(connectionGuard, position: .first)
            }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(HTTPParseErrorResponder(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
