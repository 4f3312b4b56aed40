import SyncProtocol
import Foundation
import Logging

/// Connecting, the handshake, auth, losing the connection and reconnecting.
extension PersistentConnection {
    /// Whether the connection should be (or get) connected.
    var shouldConnect: Bool { started && !offline && !killedByServer && !isShutDown }

    /// Starts an attempt unless one is under way or the connection should stay down.
    func connectIfIdle() {
        guard shouldConnect else { return }
        switch phase {
        case .idle: beginAttempt()
        case .waitingToRetry:
            retryTask?.cancel()
            beginAttempt()
        default: return
        }
    }

    /// Starts a new attempt: fetch a token (if there is a provider), then open the transport.
    func beginAttempt() {
        cancelAttemptTasks()
        retryTask?.cancel()
        retryTask = nil
        attempt += 1
        let attempt = self.attempt
        guard let provider = authTokenProvider else {
            openTransport()
            return
        }
        phase = .gettingToken
        let force = forceTokenRefresh
        let events = self.events
        attemptTasks.append(Task {
            do {
                let token = try await provider.token(forceRefresh: force)
                events.yield(.tokenFetched(attempt: attempt, .success(token)))
            } catch {
                events.yield(.tokenFetched(attempt: attempt, .failure(error)))
            }
        })
    }

    func tokenFetched(attempt: Int, _ result: Result<String?, any Error>) {
        guard attempt == self.attempt, phase == .gettingToken else { return }
        switch result {
        case .success(let token):
            authToken = token
            forceTokenRefresh = false
            openTransport()
        case .failure(let error):
            logger.info("no auth token now; will retry", metadata: ["error": "\(error)"])
            phase = .idle
            scheduleRetry()
        }
    }

    /// Opens the transport, with the connect timeout running until the handshake arrives.
    func openTransport() {
        phase = .connecting
        let attempt = self.attempt
        let events = self.events
        let transport = self.transport
        let endpoint = self.endpoint
        let lastSessionID = self.lastSessionID
        let timeout = configuration.connectTimeout
        let clock = configuration.clock
        attemptTasks.append(Task {
            do {
                let connection = try await transport.connect(to: endpoint, lastSessionID: lastSessionID)
                events.yield(.transportOpened(attempt: attempt, connection))
            } catch {
                events.yield(.transportFailed(attempt: attempt, error))
            }
        })
        attemptTasks.append(Task {
            do {
                try await clock.sleep(for: timeout)
                events.yield(.connectTimedOut(attempt: attempt))
            } catch {}
        })
    }

    func transportOpened(attempt: Int, _ connection: any TransportConnection) {
        guard attempt == self.attempt, phase == .connecting else {
            Task { await connection.close() }
            return
        }
        live = LiveConnection(
            attempt: attempt, transport: connection, events: events, keepAliveInterval: configuration.keepAliveInterval,
            maxIncomingMessageBytes: configuration.maxIncomingMessageBytes, clock: configuration.clock)
        phase = .handshaking
    }

    func transportFailed(attempt: Int, _ error: any Error) {
        guard attempt == self.attempt, phase == .connecting else { return }
        logger.debug("connect failed", metadata: ["error": "\(error)"])
        cancelAttemptTasks()
        phase = .idle
        scheduleRetry()
    }

    func connectTimedOut(attempt: Int) {
        guard attempt == self.attempt, phase == .connecting || phase == .handshaking else { return }
        logger.info("connect timed out")
        cancelAttemptTasks()
        if live != nil {
            connectionLost(reason: "no handshake in time")
        } else {
            phase = .idle
            scheduleRetry()
        }
    }

    func cancelAttemptTasks() {
        for task in attemptTasks { task.cancel() }
        attemptTasks = []
    }

    /// The handshake arrived: record the clock offset and session, report, send stats, then
    /// authenticate or restore state.
    func handshakeReceived(timestamp: Int64, sessionID: String) {
        cancelAttemptTasks()
        live?.connectedAt = configuration.clock.now
        lastSessionID = sessionID
        let now = configuration.wallClock()
        phase = .authenticating
        delegate?.connectionDidConnect(serverTimeOffsetMilliseconds: timestamp - now, sessionID: sessionID)
        if !statsSent, let name = configuration.sdkStatsName {
            statsSent = true
            sendRequest("s", body: OutgoingMessage.statsBody(name: name), expecting: .ignored)
        }
        if let token = authToken {
            sendAuth(token: token, initial: true)
        } else {
            if reportedAuthenticated == true { reportAuthenticated(false) }
            becomeConnected()
        }
    }

    func sendAuth(token: String, initial: Bool) {
        let action = OutgoingMessage.isJWT(token) ? "auth" : "gauth"
        sendRequest(action, body: OutgoingMessage.authBody(token: token), expecting: .auth(initial: initial))
    }

    func authAnswered(_ status: RequestStatus, initial: Bool) {
        if status.isOK {
            invalidTokenCount = 0
            reportAuthenticated(true)
            if initial && phase == .authenticating { becomeConnected() }
            return
        }
        logger.warning("authentication failed", metadata: ["status": "\(status.status)", "message": "\(status.message ?? "")"])
        authToken = nil
        forceTokenRefresh = true
        if status.status == .invalidToken {
            invalidTokenCount += 1
            if invalidTokenCount >= 3 {
                logger.warning("the server rejected the auth token 3 times; backing off as long as possible")
                backoff.useMaximumDelay()
            }
        }
        reportAuthenticated(false)
        connectionLost(reason: "authentication failed")
    }

    func reportAuthenticated(_ authenticated: Bool) {
        reportedAuthenticated = authenticated
        delegate?.connectionAuthStatusChanged(authenticated: authenticated)
    }

    /// Asks the provider again with a forced refresh: on a live connection, re-authenticate;
    /// when waiting to connect, connect now.
    func refreshToken() {
        guard let provider = authTokenProvider else { return }
        forceTokenRefresh = true
        switch phase {
        case .idle, .waitingToRetry, .gettingToken:
            guard shouldConnect else { return }
            beginAttempt()
        case .connecting, .handshaking:
            return  // The next connect forces a refresh.
        case .authenticating, .connected:
            let attempt = self.attempt
            let events = self.events
            Task {
                do {
                    let token = try await provider.token(forceRefresh: true)
                    events.yield(.tokenRefreshed(attempt: attempt, .success(token)))
                } catch {
                    events.yield(.tokenRefreshed(attempt: attempt, .failure(error)))
                }
            }
        }
    }

    func tokenRefreshed(attempt: Int, _ result: Result<String?, any Error>) {
        guard attempt == self.attempt, phase.isPastHandshake else { return }
        switch result {
        case .success(let token):
            forceTokenRefresh = false
            guard token != authToken else { return }
            authToken = token
            if let token {
                sendAuth(token: token, initial: false)
            } else {
                sendRequest("unauth", body: "{}", expecting: .ignored)
                reportAuthenticated(false)
            }
        case .failure(let error):
            logger.info("token refresh failed; keeping the current auth", metadata: ["error": "\(error)"])
        }
    }

    /// Handshake (and auth) done: requests go out. The state is restored in Android's order
    /// (listens, writes, onDisconnect operations, gets) by ``restoreIfConnected()`` at the end of
    /// this event, since each listen's hash is awaited.
    func becomeConnected() {
        phase = .connected
        listensToSend = listens.values.sorted(by: { $0.serial < $1.serial })
        restorePending = true
    }

    /// The connection is gone (or is being closed): tear it down, fail what cannot be retried,
    /// report, and reconnect unless `reconnect` is false or the connection should stay down.
    func connectionLost(reason: String, reconnect: Bool = true, flush: Bool = false) {
        cancelAttemptTasks()
        guard let live else {
            phase = .idle
            if reconnect { scheduleRetry() }
            return
        }
        logger.debug("disconnected", metadata: ["reason": "\(reason)"])
        self.live = nil
        live.close(flush: flush, clock: configuration.clock)
        let wasConnected = phase.isPastHandshake
        phase = .idle
        pendingReplies.removeAll()
        sentGets.removeAll()
        listensToSend.removeAll()
        restorePending = false
        var failed: [QueuedWrite] = []
        for id in writes.keys.sorted() where writes[id]!.sent {
            if writes[id]!.hasHash {
                failed.append(writes.removeValue(forKey: id)!)
            } else {
                writes[id]!.sent = false
            }
        }
        for id in onDisconnectOperations.keys.sorted() where onDisconnectOperations[id]!.sent {
            failed.append(onDisconnectOperations.removeValue(forKey: id)!)
        }
        if let connectedAt = live.connectedAt,
           configuration.clock.now - connectedAt >= configuration.backoff.successfulConnectionDuration {
            backoff.signalSuccess()
        }
        for write in failed { write.onComplete?(.disconnected) }
        if wasConnected { delegate?.connectionDidDisconnect() }
        if reconnect { scheduleRetry() }
    }

    /// Waits out the backoff, then starts an attempt (when the connection should connect).
    func scheduleRetry() {
        guard shouldConnect else {
            phase = .idle
            return
        }
        let delay = backoff.nextDelay(random: Double.random(in: 0..<1))
        retryTimer += 1
        let timer = retryTimer
        phase = .waitingToRetry(timer: timer)
        let events = self.events
        let clock = configuration.clock
        retryTask?.cancel()
        retryTask = Task {
            do {
                try await clock.sleep(for: delay)
                events.yield(.retryDue(timer: timer))
            } catch {}
        }
    }

    func goOfflineNow() {
        offline = true
        retryTask?.cancel()
        retryTask = nil
        connectionLost(reason: "went offline", reconnect: false, flush: true)
        failWaitingGets()
    }

    func goOnlineNow() {
        guard offline else { return }
        offline = false
        connectIfIdle()
    }

    func shutDownNow() {
        retryTask?.cancel()
        retryTask = nil
        connectionLost(reason: "shut down", reconnect: false, flush: true)
        isShutDown = true
        delegate = nil
        events.finish()
    }
}
