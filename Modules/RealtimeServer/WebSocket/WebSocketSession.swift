import CoreTree
import Foundation
import Logging
import QueryEngine
import RequestParsing
import SyncProtocol
import Synchronization
import ServerCore

/// Delivers listen updates to one WebSocket connection as protocol pushes.
final class ConnectionSubscriber: DataSubscriber {
    let outbox: Outbox
    /// Listens the namespace revoked, for the session to forget (identified as it keys them).
    private let revocations = Mutex<[(path: TreePath, query: String, tag: Int?)]>([])
    /// Counts the connection's authentications; an expiry acts only on the one it was set for.
    private let authentication = Mutex<(generation: Int, expired: Bool)>((0, false))

    init(outbox: Outbox) { self.outbox = outbox }

    func revoked(path: TreePath, params: QueryParams, tag: Int?) {
        revocations.withLock { $0.append((path, params.identifier, tag)) }
        outbox.enqueue(ServerMessage.listenRevoked(path: path, queryJSON: params.isDefault ? nil : params.wireObject.jsonString(format: .export)))
    }

    /// A new authentication: earlier expiries no longer apply. Returns its generation.
    func authenticated() -> Int {
        authentication.withLock { state in
            state.generation += 1
            state.expired = false
            return state.generation
        }
    }

    /// The token of authentication `generation` expired: whether it is still the current one
    /// (then the session falls back to unauthenticated at its next request).
    func expire(_ generation: Int) -> Bool {
        authentication.withLock { state in
            guard state.generation == generation else { return false }
            state.expired = true
            return true
        }
    }

    /// Whether the current authentication expired (once).
    func takeExpiry() -> Bool {
        authentication.withLock { state in
            defer { state.expired = false }
            return state.expired
        }
    }

    /// The revocations since the last call.
    func takeRevocations() -> [(path: TreePath, query: String, tag: Int?)] {
        revocations.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    func send(_ update: ListenUpdate) {
        switch update.change {
        case .overwrite:
            outbox.enqueue(ServerMessage.dataPush(path: update.path, dataJSON: update.payload.exportForm, tag: update.tag))
        case .merge:
            outbox.enqueue(ServerMessage.mergePush(path: update.path, dataJSON: update.payload.exportForm, tag: update.tag))
        }
    }
}

/// One client's WebSocket session: reassembles frames, carries out each request against the
/// namespace, and when the connection ends runs its onDisconnect writes exactly once and drops
/// its listens.
///
/// Requests are handled one at a time in arrival order; a write's acknowledgement is queued when
/// the write is durable, so a client may have many writes in flight.
struct WebSocketSession {
    let database: NamespaceDatabase
    let subscriber: ConnectionSubscriber
    let verifier: TokenVerifier
    let limits: Limits
    let logger: Logger
    private var assembler = FrameAssembler()
    private var listens: [ListenKey: (path: TreePath, params: QueryParams, tag: Int?)] = [:]
    private var onDisconnect = OnDisconnectQueue()
    private let metrics: ServerMetrics?
    /// Names this connection's held onDisconnect writes in a shared store.
    private let connectionID = UUID().uuidString
    private var ended = false
    /// Who the rules see making this connection's requests: set by `auth`, back to
    /// unauthenticated by `unauth`, a rejected token, or the token's expiry.
    private(set) var caller: Caller = .anonymous
    /// How many listens the connection holds.
    var listenCount: Int { listens.count }
    /// How many onDisconnect writes the server holds for the connection.
    var onDisconnectCount: Int { onDisconnect.operations.count }
    /// Ends the current authentication when its token expires.
    private var expiryTask: Task<Void, Never>?

    private struct ListenKey: Hashable {
        let path: TreePath
        let query: String
        let tag: Int?
    }

    /// What one connection may hold.
    struct Limits {
        /// The most listens at once.
        var maxListens: Int
        /// The most bytes of onDisconnect writes (as sent) at once.
        var maxOnDisconnectBytes: Int
        /// Whether stamped writes are applied at most once (the `once` extension).
        var exactlyOnceWrites = true
        /// The clock a token's expiry is timed with.
        var clock: ServerClock = .system
    }

    init(
        database: NamespaceDatabase, subscriber: ConnectionSubscriber, verifier: TokenVerifier, limits: Limits,
        metrics: ServerMetrics? = nil, logger: Logger
    ) {
        self.metrics = metrics
        self.database = database
        self.subscriber = subscriber
        self.verifier = verifier
        self.limits = limits
        self.logger = logger
    }

    private var outbox: Outbox { subscriber.outbox }

    /// Takes one WebSocket text message (a frame of the protocol).
    mutating func receive(_ frame: String) async {
        let output: FrameAssembler.Output
        do {
            output = try assembler.receive(frame)
        } catch {
            outbox.enqueue(ServerMessage.error(error.message))
            return
        }
        switch output {
        case .incomplete, .keepAlive:
            return
        case .tooBig(let prefix):
            let message = "The message is larger than \(WireLimits.maxWriteBytes) bytes (16 MB), the largest write allowed; nothing was written."
            if let number = ClientMessage.requestNumber(inPrefix: prefix) {
                outbox.enqueue(ServerMessage.reply(number, status: .tooBig, message: message))
            } else {
                outbox.enqueue(ServerMessage.error(message))
            }
        case .message(let text):
            await handle(text)
        }
    }

    private mutating func handle(_ text: String) async {
        let message: ClientMessage
        do {
            message = try ClientMessage.parse(text)
        } catch {
            logger.debug("malformed message", metadata: ["error": "\(error.message)"])
            outbox.enqueue(ServerMessage.error(error.message))
            return
        }
        switch message {
        case .control(let type):
            if type == "p" { outbox.enqueue(ServerMessage.pong) }
        case .request(let number, .failure(let error)):
            let status: WireStatus = error.code == .tooBig ? .tooBig : .invalidArgs
            outbox.enqueue(ServerMessage.reply(number, status: status, message: error.message))
        case .request(let number, .success(let action)):
            if action.isWrite && text.utf8.count > WireLimits.maxWriteBytes {
                outbox.enqueue(ServerMessage.reply(
                    number, status: .tooBig,
                    message: "The write is larger than \(WireLimits.maxWriteBytes) bytes (16 MB), the most a WebSocket write may carry; nothing was written."))
                return
            }
            await perform(action, number: number, size: text.utf8.count)
        }
    }

    private mutating func perform(_ action: ClientAction, number: Int, size: Int) async {
        if subscriber.takeExpiry() { caller = .anonymous }
        for revoked in subscriber.takeRevocations() {
            if listens.removeValue(forKey: ListenKey(path: revoked.path, query: revoked.query, tag: revoked.tag)) != nil {
                metrics?.listenRemoved(.webSocket)
            }
        }
        switch action {
        case .listen(let path, let query, let tag, let hash):
            guard let params = parseQuery(query, number: number) else { return }
            let key = ListenKey(path: path, query: params.identifier, tag: tag)
            if listens[key] == nil && listens.count >= limits.maxListens {
                outbox.enqueue(ServerMessage.reply(
                    number, status: .failure,
                    message: "This connection holds \(limits.maxListens) listens, the most the server allows; remove one first."))
                return
            }
            if let old = listens.removeValue(forKey: key) {
                await database.unlisten(subscriber, path: old.path, params: old.params, tag: old.tag)
                metrics?.listenRemoved(.webSocket)
            }
            do {
                try await database.listen(subscriber, path: path, params: params, tag: tag, knownHash: hash, as: caller)
            } catch {
                listens[key] = nil
                outbox.enqueue(ServerMessage.reply(number, status: error.wireStatus, message: error.message))
                return
            }
            listens[key] = (path, params, tag)
            metrics?.listenAdded(.webSocket)
            // As Firebase: an unindexed order is served, with a warning the client logs.
            let indexed = await database.isIndexed(path, params: params)
            outbox.enqueue(ServerMessage.reply(number, status: .ok, dataJSON: indexed ? "{}" : #"{"w":["no_index"]}"#))
        case .unlisten(let path, let query, let tag):
            guard let params = parseQuery(query, number: number) else { return }
            if let old = listens.removeValue(forKey: ListenKey(path: path, query: params.identifier, tag: tag)) {
                await database.unlisten(subscriber, path: old.path, params: old.params, tag: old.tag)
                metrics?.listenRemoved(.webSocket)
            }
            outbox.enqueue(ServerMessage.reply(number, status: .ok))
        case .put(let path, let data, let hash, let stamp):
            await submit(.set(path: path, node: data), condition: hash.map { .hash($0) }, stamp: stamp, number: number)
        case .merge(let path, let children, let stamp):
            await submit(.update(path: path, children: children), condition: nil, stamp: stamp, number: number)
        case .onDisconnectPut(let path, let data):
            await register(.set(path: path, node: data), number: number, size: size)
        case .onDisconnectMerge(let path, let children):
            await register(.update(path: path, children: children), number: number, size: size)
        case .onDisconnectCancel(let path):
            var next = onDisconnect
            next.cancel(at: path)
            await hold(next, number: number)
        case .get(let path, let query):
            guard let params = parseQuery(query, number: number) else { return }
            metrics?.read(.webSocket)
            do {
                let data = try await database.read(path, params: params, as: caller)
                outbox.enqueue(ServerMessage.reply(number, status: .ok, dataJSON: data.jsonString(format: .export)))
            } catch {
                outbox.enqueue(ServerMessage.reply(number, status: error.wireStatus, message: error.message))
            }
        case .auth(let credential, let authVariable, _):
            let verified: Credential
            do throws(TokenError) {
                verified = try await verifier.verify(credential)
            } catch {
                await authenticate(as: .anonymous, expires: nil)
                outbox.enqueue(ServerMessage.reply(number, status: error.wireStatus, message: error.message))
                return
            }
            switch verified {
            case .admin:
                if let authVariable {
                    // An administrator acting as a user (`authvar`), or as nobody (`noauth`).
                    await authenticate(as: .user(auth: authVariable.isEmpty ? nil : authVariable), expires: nil)
                    outbox.enqueue(ServerMessage.reply(number, status: .ok, dataJSON: #"{"auth":null}"#))
                } else {
                    await authenticate(as: .admin, expires: nil)
                    outbox.enqueue(ServerMessage.reply(number, status: .ok, dataJSON: #"{"auth":null,"admin":true}"#))
                }
            case .user(let auth, let expires):
                await authenticate(as: .user(auth: auth), expires: expires)
                var reply = "{\"auth\":\(auth.child(at: "token").jsonString())"
                if let expires { reply += ",\"expires\":\(Int64(expires.timeIntervalSince1970))" }
                outbox.enqueue(ServerMessage.reply(number, status: .ok, dataJSON: reply + "}"))
            }
        case .unauth:
            await authenticate(as: .anonymous, expires: nil)
            outbox.enqueue(ServerMessage.reply(number, status: .ok, message: "unauthenticated"))
        case .stats, .appCheck, .unAppCheck:
            outbox.enqueue(ServerMessage.reply(number, status: .ok))
        }
    }

    /// Makes `caller` the connection's identity: its listens are judged again with it, and when
    /// `expires` comes the connection gets `ac` (expired_token), acts as unauthenticated, and
    /// loses the listens that needed the token.
    private mutating func authenticate(as caller: Caller, expires: Date?) async {
        expiryTask?.cancel()
        expiryTask = nil
        self.caller = caller
        let generation = subscriber.authenticated()
        await database.reauthorize(subscriber, as: caller)
        guard let expires else { return }
        let (subscriber, database) = (self.subscriber, self.database)
        let clock = limits.clock
        expiryTask = Task {
            try? await clock.sleep(until: expires)
            guard !Task.isCancelled, subscriber.expire(generation) else { return }
            subscriber.outbox.enqueue(ServerMessage.authRevoked(status: .expiredToken, reason: "Auth token is expired."))
            await database.reauthorize(subscriber, as: .anonymous)
        }
    }

    private func parseQuery(_ query: Node, number: Int) -> QueryParams? {
        do {
            return try QueryParams(wireObject: query)
        } catch {
            outbox.enqueue(ServerMessage.reply(number, status: .invalidArgs, message: "Invalid query: \(error.message)"))
            return nil
        }
    }

    private func submit(_ operation: WriteOperation, condition: WriteCondition?, stamp: WriteStamp?, number: Int) async {
        let (outbox, metrics, start) = (self.outbox, self.metrics, ContinuousClock.now)
        // Without the extension the server is a Firebase server: stamps are not honoured.
        let stamp = limits.exactlyOnceWrites ? stamp : nil
        await database.submit(operation, condition: condition, stamp: stamp, as: caller) { result in
            switch result {
            case .committed:
                outbox.enqueue(ServerMessage.reply(number, status: .ok))
                metrics?.wrote(.webSocket, .ok, since: start)
            case .stale:
                metrics?.wrote(.webSocket, .stale, since: start)
                outbox.enqueue(ServerMessage.reply(number, status: .dataStale, message: "The data has changed since the hash was taken."))
            case .failed(let error):
                if let cause = error.underlyingError, error.code == .storageFailed {
                    logger.error("write failed", metadata: ["error": "\(error.message)", "cause": "\(cause)"])
                }
                metrics?.wrote(.webSocket, error.code == .permissionDenied ? .denied : .failed, since: start)
                outbox.enqueue(ServerMessage.reply(number, status: error.wireStatus, message: error.message))
            }
        }
    }

    /// Checks an onDisconnect write as the write itself would be checked, then holds it.
    private mutating func register(_ operation: WriteOperation, number: Int, size: Int) async {
        do {
            try NamespaceDatabase.check(operation)
        } catch {
            outbox.enqueue(ServerMessage.reply(number, status: error.wireStatus, message: error.message))
            return
        }
        guard await database.mayWrite(operation, as: caller) else {
            outbox.enqueue(ServerMessage.reply(number, status: .permissionDenied, message: "Permission denied"))
            return
        }
        var next = onDisconnect
        guard next.add(operation, as: caller, bytes: size, limit: limits.maxOnDisconnectBytes) else {
            outbox.enqueue(ServerMessage.reply(
                number, status: .tooBig,
                message: "This connection's onDisconnect writes would pass \(limits.maxOnDisconnectBytes) bytes, the most the server holds; nothing was registered."))
            return
        }
        await hold(next, number: number)
    }

    /// Makes `next` the connection's onDisconnect writes once a shared store (several nodes)
    /// holds them too, so another node runs them if this one dies; answers request `number`.
    private mutating func hold(_ next: OnDisconnectQueue, number: Int) async {
        do {
            try await database.holdOnDisconnect(
                connection: connectionID, writes: next.operations.map { HeldWrite(operation: $0.operation, caller: $0.caller) })
        } catch {
            outbox.enqueue(ServerMessage.reply(
                number, status: .failure, message: "The onDisconnect change could not be stored: \(error). Nothing changed."))
            return
        }
        onDisconnect = next
        outbox.enqueue(ServerMessage.reply(number, status: .ok))
    }

    /// The connection ended (closed, dropped or timed out): runs the onDisconnect writes, once,
    /// and drops the listens.
    mutating func end() async {
        guard !ended else { return }
        ended = true
        expiryTask?.cancel()
        for (_, listen) in listens {
            await database.unlisten(subscriber, path: listen.path, params: listen.params, tag: listen.tag)
            metrics?.listenRemoved(.webSocket)
        }
        listens = [:]
        var operations = onDisconnect.takeAll()
        if !operations.isEmpty, await !database.takeOnDisconnect(connection: connectionID) {
            // Another node claimed them (this node's lease had run out): they ran there.
            operations = []
        }
        let logger = self.logger
        for (operation, caller) in operations {
            // Judged again as it runs: a write the rules no longer allow is dropped and logged.
            await database.submit(operation, as: caller) { result in
                if case .failed(let error) = result {
                    logger.warning("onDisconnect write failed", metadata: ["path": "\(operation.path)", "error": "\(error)"])
                }
            }
        }
    }
}

extension ClientAction {
    /// Whether the action carries data to write.
    var isWrite: Bool {
        switch self {
        case .put, .merge, .onDisconnectPut, .onDisconnectMerge: true
        default: false
        }
    }
}
