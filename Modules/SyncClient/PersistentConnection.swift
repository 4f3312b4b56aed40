public import CoreTree
public import SyncProtocol
public import Logging

/// The client's connection to a Realtime Database server (Android's `PersistentConnectionImpl`).
///
/// It connects (after fetching an auth token, if there is a provider), completes the handshake,
/// authenticates, then restores its state: every listen, the outstanding writes in the order they
/// were made, the queued onDisconnect operations, the outstanding gets. It reconnects after any
/// drop with backoff until ``goOffline()`` or ``shutdown()`` (or the server's shutdown control).
///
/// The request methods are `nonisolated` and take effect in call order: each enqueues a command
/// on one ordered stream that the actor drains in a single loop, so writes go out in the order
/// they were made. Callbacks and ``ConnectionDelegate`` calls come from that loop, one at a time.
///
/// The delegate is held strongly until ``shutdown()``.
public actor PersistentConnection {
    let endpoint: ConnectionEndpoint
    let transport: any Transport
    let authTokenProvider: (any AuthTokenProvider)?
    let configuration: ConnectionConfiguration
    let logger: Logger
    var delegate: (any ConnectionDelegate)?
    /// The ordered stream of commands and reports the actor drains.
    nonisolated let events: AsyncStream<ConnectionEvent>.Continuation

    // Connection state.
    var phase = ConnectionPhase.idle
    var attempt = 0
    var live: LiveConnection?
    /// The tasks of the attempt under way (token fetch, connect, connect timeout).
    var attemptTasks: [Task<Void, Never>] = []
    var retryTask: Task<Void, Never>?
    var retryTimer = 0
    var backoff: ReconnectBackoff
    var started = false
    var offline = false
    var killedByServer = false
    var isShutDown = false
    var lastSessionID: String?
    /// Whether the current connection's server applies stamped writes at most once.
    var serverHonoursStamps = false
    var statsSent = false

    // Auth.
    var authToken: String?
    var forceTokenRefresh = false
    var invalidTokenCount = 0
    var reportedAuthenticated: Bool?

    // Requests.
    var nextRequestNumber = 1
    var pendingReplies: [Int: PendingReply] = [:]
    var nextOperationID = 1
    var nextListenSerial = 1
    var listens: [ListenKey: ActiveListen] = [:]
    /// Listens to send, in order, once their hashes are known; on connecting, every listen.
    var listensToSend: [ActiveListen] = []
    /// Set when the connection just became ready: the rest of the state goes out after the listens.
    var restorePending = false
    var writes: [Int: QueuedWrite] = [:]
    var onDisconnectOperations: [Int: QueuedWrite] = [:]
    var gets: [Int: PendingGet] = [:]
    /// The gets sent on the current connection.
    var sentGets: Set<Int> = []

    /// Makes a connection; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - endpoint: Where to connect.
    ///   - transport: How to connect (``WebSocketTransport``, or ``InMemoryTransport`` in tests).
    ///   - delegate: Receives connection events; held strongly until ``shutdown()``.
    ///   - authTokenProvider: Supplies tokens; nil connects unauthenticated.
    ///   - configuration: Keep-alive, timeouts and backoff.
    ///   - logger: Where the connection logs.
    public init(
        endpoint: ConnectionEndpoint, transport: any Transport, delegate: any ConnectionDelegate,
        authTokenProvider: (any AuthTokenProvider)? = nil, configuration: ConnectionConfiguration = .init(),
        logger: Logger = Logger(label: "rtdb.connection")
    ) {
        self.endpoint = endpoint
        self.transport = transport
        self.delegate = delegate
        self.authTokenProvider = authTokenProvider
        self.configuration = configuration
        self.logger = logger
        backoff = ReconnectBackoff(policy: configuration.backoff)
        let (stream, events) = AsyncStream<ConnectionEvent>.makeStream()
        self.events = events
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    deinit {
        events.finish()
        live?.close(flush: false)
        retryTask?.cancel()
        for task in attemptTasks { task.cancel() }
    }

    /// Whether requests go out now: the handshake (and the auth, when there is a token) completed.
    public var isConnected: Bool { phase == .connected }

    // MARK: Commands (nonisolated, in call order)

    /// Begins connecting; does nothing when already started.
    public nonisolated func start() {
        events.yield(.start)
    }

    /// Listens for `request`. `hash` is asked each time the listen is sent (on every reconnect),
    /// and awaited: the connection handles nothing else meanwhile, so the order of requests holds.
    /// `onComplete` is called with the server's answer each time. A non-ok answer drops the listen.
    public nonisolated func listen(
        _ request: ListenRequest, hash: @escaping @Sendable () async -> String,
        onComplete: @escaping @Sendable (RequestStatus) -> Void
    ) {
        events.yield(.listen(request, hash: hash, onComplete: onComplete))
    }

    /// Stops listening for `request` (sending `n` when connected).
    public nonisolated func unlisten(_ request: ListenRequest) {
        events.yield(.unlisten(request))
    }

    /// Replaces the data at `path`; with `hash`, only if the server's data there has that hash
    /// (compare-and-set). Sent when connected, re-sent after reconnects until acknowledged; a
    /// compare-and-set put that was sent when the connection drops completes with `disconnected`.
    /// With a `stamp`, a server that announces the `once` extension applies it at most once
    /// (other servers get the plain put).
    public nonisolated func put(
        path: TreePath, data: Node, hash: String? = nil, stamp: WriteStamp? = nil, onComplete: (@Sendable (RequestStatus) -> Void)? = nil
    ) {
        let body = OutgoingMessage.putBody(path: path, data: data, hash: hash)
        events.yield(.write(QueuedWrite(action: "p", body: body, stamp: stamp, hasHash: hash != nil, onComplete: onComplete)))
    }

    /// Updates the children (paths relative to `path`; ``Node/empty`` deletes) at once.
    public nonisolated func merge(
        path: TreePath, children: [(path: TreePath, node: Node)], stamp: WriteStamp? = nil,
        onComplete: (@Sendable (RequestStatus) -> Void)? = nil
    ) {
        let body = OutgoingMessage.mergeBody(path: path, children: children)
        events.yield(.write(QueuedWrite(action: "m", body: body, stamp: stamp, hasHash: false, onComplete: onComplete)))
    }

    /// Asks the server to replace the data at `path` when this connection ends (`o`).
    public nonisolated func onDisconnectPut(
        path: TreePath, data: Node, onComplete: (@Sendable (RequestStatus) -> Void)? = nil
    ) {
        let body = OutgoingMessage.putBody(path: path, data: data, hash: nil)
        events.yield(.onDisconnect(QueuedWrite(action: "o", body: body, hasHash: false, onComplete: onComplete)))
    }

    /// Asks the server to update children at `path` when this connection ends (`om`).
    public nonisolated func onDisconnectMerge(
        path: TreePath, children: [(path: TreePath, node: Node)], onComplete: (@Sendable (RequestStatus) -> Void)? = nil
    ) {
        let body = OutgoingMessage.mergeBody(path: path, children: children)
        events.yield(.onDisconnect(QueuedWrite(action: "om", body: body, hasHash: false, onComplete: onComplete)))
    }

    /// Cancels the onDisconnect operations at and below `path` (`oc`).
    public nonisolated func onDisconnectCancel(path: TreePath, onComplete: (@Sendable (RequestStatus) -> Void)? = nil) {
        let body = OutgoingMessage.cancelBody(path: path)
        events.yield(.onDisconnect(QueuedWrite(action: "oc", body: body, hasHash: false, onComplete: onComplete)))
    }

    /// Reads the data at `path` (filtered by the wire `query`, ``Node/empty`` for the default) once.
    /// Sent only when connected; waits (and is re-sent after drops) until answered.
    public nonisolated func get(
        path: TreePath, query: Node, onComplete: @escaping @Sendable (Result<Node, RequestFailure>) -> Void
    ) {
        events.yield(.get(PendingGet(path: path, query: query, onComplete: onComplete)))
    }

    /// Asks the token provider again (forcing a refresh): re-authenticates the live connection, or
    /// connects at once if the connection was waiting (for example for a token).
    public nonisolated func refreshAuthToken() {
        events.yield(.refreshAuthToken)
    }

    /// Closes the connection and stops reconnecting until ``goOnline()``; requests stay queued.
    public nonisolated func goOffline() {
        events.yield(.goOffline)
    }

    /// Returns once every command made before this call has been handled: a write given before
    /// it has been sent (or held, while offline or unauthenticated). Tests use it as the barrier
    /// that proves something did not happen, instead of waiting for a while.
    public nonisolated func barrier() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // After shutdown the command stream is finished: nothing is left to wait for.
            if case .terminated = events.yield(.barrier({ continuation.resume() })) { continuation.resume() }
        }
    }

    /// Resumes after ``goOffline()``, connecting at once.
    public nonisolated func goOnline() {
        events.yield(.goOnline)
    }

    /// Completes every outstanding put, merge and onDisconnect operation (sent or not) with
    /// `write_canceled` and forgets them.
    public nonisolated func purgeOutstandingWrites() {
        events.yield(.purgeOutstandingWrites)
    }

    /// Closes the connection for good (sending what is already queued first) and releases the
    /// delegate. Callbacks of requests still outstanding are not called.
    public nonisolated func shutdown() {
        events.yield(.shutdown)
    }

    // MARK: The loop

    /// Handles one event. The loop awaits each event before the next, so events never
    /// interleave; the only suspensions are for listen hashes (``restoreIfConnected()``).
    func handle(_ event: ConnectionEvent) async {
        handleNow(event)
        await restoreIfConnected()
    }

    /// The synchronous part of handling an event.
    func handleNow(_ event: ConnectionEvent) {
        if case .barrier(let body) = event { return body() }
        if isShutDown {
            if case .transportOpened(_, let connection) = event { Task { await connection.close() } }
            return
        }
        switch event {
        case .start:
            guard !started else { return }
            started = true
            connectIfIdle()
        case .listen(let request, let hash, let onComplete):
            addListen(request, hash: hash, onComplete: onComplete)  // Sent by restoreIfConnected().
        case .unlisten(let request):
            removeListen(request)
        case .write(let write):
            addWrite(write)
        case .onDisconnect(let operation):
            addOnDisconnect(operation)
        case .get(let get):
            addGet(get)
        case .refreshAuthToken:
            refreshToken()
        case .goOffline:
            goOfflineNow()
        case .goOnline:
            goOnlineNow()
        case .purgeOutstandingWrites:
            purgeWrites()
        case .shutdown:
            shutDownNow()
        case .barrier:
            break  // Handled above, also after shutdown.
        case .tokenFetched(let attempt, let result):
            tokenFetched(attempt: attempt, result)
        case .tokenRefreshed(let attempt, let result):
            tokenRefreshed(attempt: attempt, result)
        case .transportOpened(let attempt, let connection):
            transportOpened(attempt: attempt, connection)
        case .transportFailed(let attempt, let error):
            transportFailed(attempt: attempt, error)
        case .connectTimedOut(let attempt):
            connectTimedOut(attempt: attempt)
        case .getTimedOut(let id):
            getTimedOut(id)
        case .frameReceived(let attempt, let frame):
            guard live?.attempt == attempt else { return }
            receive(frame)
        case .transportClosed(let attempt, let error):
            guard live?.attempt == attempt else { return }
            connectionLost(reason: error.map { "connection failed: \($0)" } ?? "connection closed by the server")
        case .keepAliveDue(let attempt):
            guard let live, live.attempt == attempt else { return }
            live.sendKeepAliveIfIdle(configuration.keepAliveInterval)
        case .retryDue(let timer):
            guard phase == .waitingToRetry(timer: timer) else { return }
            beginAttempt()
        }
    }
}
