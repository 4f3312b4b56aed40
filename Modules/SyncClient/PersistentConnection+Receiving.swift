import SyncProtocol
import Logging

/// Incoming frames and messages: reassembly, the handshake, replies, pushes and control messages.
extension PersistentConnection {
    /// Takes one frame from the live connection.
    func receive(_ frame: String) {
        let output: FrameAssembler.Output?
        do {
            // In place: a copy of the assembler would copy its buffer on every frame.
            output = try live?.assembler.receive(frame)
        } catch {
            protocolViolation("\(error)")
            return
        }
        guard let output else { return }
        switch output {
        case .message(let text):
            receiveMessage(text)
        case .keepAlive, .incomplete:
            return
        case .tooBig(let prefix):
            protocolViolation("a message over \(configuration.maxIncomingMessageBytes) bytes: \(prefix.prefix(100))")
        }
    }

    /// Malformed server input: log it and drop the connection (which reconnects).
    func protocolViolation(_ problem: String) {
        logger.warning("dropping the connection after bad server input", metadata: ["problem": "\(problem)"])
        connectionLost(reason: "bad server input")
    }

    func receiveMessage(_ text: String) {
        let message: IncomingMessage
        do {
            message = try IncomingMessage.parse(text)
        } catch {
            protocolViolation("\(error.message) \(text.prefix(200))")
            return
        }
        if phase == .handshaking {
            guard case .handshake(let timestamp, let sessionID, _, let extensions) = message else {
                protocolViolation("the first message is not a handshake: \(text.prefix(200))")
                return
            }
            serverHonoursStamps = extensions.contains(WriteStamp.handshakeExtension)
            handshakeReceived(timestamp: timestamp, sessionID: sessionID)
            return
        }
        switch message {
        case .handshake:
            logger.info("ignoring a second handshake")
        case .shutdown(let reason):
            logger.warning("the server shut the connection down", metadata: ["reason": "\(reason)"])
            killedByServer = true
            retryTask?.cancel()
            connectionLost(reason: "server shutdown: \(reason)", reconnect: false)
            delegate?.connectionDidShutDown(reason: reason)
        case .reset(let host):
            logger.info("the server asked for a reconnect", metadata: ["host": "\(host ?? "")"])
            backoff.signalSuccess()
            connectionLost(reason: "server reset")
        case .error(let message):
            logger.warning("server error", metadata: ["message": "\(message)"])
        case .otherControl:
            return
        case .reply(let number, let status, let data):
            replyReceived(number, status: status, data: data)
        case .data(let push, let path, let tag):
            delegate?.connectionDidReceive(push, at: path, tag: tag)
        case .emptyMerge:
            return
        case .listenRevoked(let path):
            listensRevoked(at: path)
        case .authRevoked(let status, let reason):
            logger.warning("the server revoked the auth token", metadata: ["status": "\(status)", "reason": "\(reason ?? "")"])
            authToken = nil
            forceTokenRefresh = true
            reportAuthenticated(false)
            connectionLost(reason: "auth revoked")
        case .otherPush(let action):
            logger.debug("ignoring a push", metadata: ["action": "\(action)"])
        }
    }
}
