import SyncProtocol
import CoreTree
import Logging

/// Listens, writes, onDisconnect operations and gets: queueing, sending and their replies.
extension PersistentConnection {
    /// Sends a request envelope on the live connection and remembers how to handle its reply.
    func sendRequest(_ action: String, body: String, expecting reply: PendingReply) {
        guard let live else { return }
        let number = nextRequestNumber
        nextRequestNumber += 1
        pendingReplies[number] = reply
        live.send(OutgoingMessage.request(number, action: action, bodyJSON: body))
    }

    func takeOperationID() -> Int {
        defer { nextOperationID += 1 }
        return nextOperationID
    }

    // MARK: Listens

    func addListen(
        _ request: ListenRequest, hash: @escaping @Sendable () async -> String, onComplete: @escaping @Sendable (RequestStatus) -> Void
    ) {
        let listen = ActiveListen(request: request, hash: hash, onComplete: onComplete, serial: nextListenSerial)
        nextListenSerial += 1
        listens[ListenKey(request)] = listen
        if phase == .connected { listensToSend.append(listen) }
    }

    /// Sends what waits: the listens (awaiting each one's hash), then, when the connection just
    /// became ready, the writes, onDisconnect operations and gets, in Android's restore order.
    ///
    /// While a hash is awaited no other event is handled, so nothing can overtake the listens;
    /// a listen removed, replaced or orphaned by a dropped connection meanwhile is not sent.
    func restoreIfConnected() async {
        while phase == .connected, !listensToSend.isEmpty {
            let listen = listensToSend.removeFirst()
            let attempt = live?.attempt
            let hash = await listen.hash()
            guard phase == .connected, live?.attempt == attempt,
                  listens[ListenKey(listen.request)]?.serial == listen.serial
            else { continue }
            let body = OutgoingMessage.listenBody(listen.request, hash: hash)
            sendRequest("q", body: body, expecting: .listen(ListenKey(listen.request), serial: listen.serial))
        }
        guard restorePending else { return }
        restorePending = false
        guard phase == .connected else { return }
        for id in writes.keys.sorted() { sendWrite(id) }
        for id in onDisconnectOperations.keys.sorted() { sendOnDisconnect(id) }
        for id in gets.keys.sorted() { sendGet(id) }
    }

    func listenAnswered(_ key: ListenKey, serial: Int, status: RequestStatus, data: Node) {
        // The listen may have been removed (or replaced) since it was sent.
        guard let listen = listens[key], listen.serial == serial else { return }
        if status.isOK {
            let warnings = data.immediateChild("w")
            if !warnings.isEmpty {
                logger.warning("listen warnings", metadata: [
                    "path": "\(key.path.wireForm)", "warnings": "\(warnings.jsonString())"])
            }
        } else {
            listens.removeValue(forKey: key)
        }
        listen.onComplete(status)
    }

    func removeListen(_ request: ListenRequest) {
        guard listens.removeValue(forKey: ListenKey(request)) != nil, phase == .connected else { return }
        sendRequest("n", body: OutgoingMessage.unlistenBody(request), expecting: .ignored)
    }

    /// A `c` push: every listen at `path` is revoked.
    func listensRevoked(at path: TreePath) {
        let revoked = listens.values.filter { $0.request.path == path }.sorted { $0.serial < $1.serial }
        for listen in revoked {
            listens.removeValue(forKey: ListenKey(listen.request))
            delegate?.connectionListenRevoked(listen.request, status: .permissionDenied)
        }
    }

    // MARK: Writes

    func addWrite(_ write: QueuedWrite) {
        let id = takeOperationID()
        writes[id] = write
        if phase == .connected { sendWrite(id) }
    }

    func sendWrite(_ id: Int) {
        guard let write = writes[id] else { return }
        writes[id]?.sent = true
        var body = write.body
        if let stamp = write.stamp, serverHonoursStamps { body = OutgoingMessage.stamped(body, stamp) }
        sendRequest(write.action, body: body, expecting: .write(id))
    }

    func addOnDisconnect(_ operation: QueuedWrite) {
        let id = takeOperationID()
        onDisconnectOperations[id] = operation
        if phase == .connected { sendOnDisconnect(id) }
    }

    func sendOnDisconnect(_ id: Int) {
        guard let operation = onDisconnectOperations[id] else { return }
        onDisconnectOperations[id]?.sent = true
        sendRequest(operation.action, body: operation.body, expecting: .onDisconnect(id))
    }

    func purgeWrites() {
        let purged = writes.sorted { $0.key < $1.key }.map(\.value)
            + onDisconnectOperations.sorted { $0.key < $1.key }.map(\.value)
        writes.removeAll()
        onDisconnectOperations.removeAll()
        for write in purged { write.onComplete?(.writeCanceled) }
    }

    // MARK: Gets

    /// Queues a get until the connection is up, and sends it if it is. After ``goOffline()`` a
    /// get cannot be answered until the app goes online again, so it fails at once with
    /// `disconnected` (the caller then answers from its cache, as Firebase's "client is offline").
    func addGet(_ get: PendingGet) {
        if offline {
            get.onComplete(.failure(RequestFailure(status: .disconnected, message: "the client is offline (goOffline)")))
            return
        }
        let id = takeOperationID()
        gets[id] = get
        if phase == .connected {
            sendGet(id)
            return
        }
        let (clock, timeout, events) = (configuration.clock, configuration.getConnectTimeout, events)
        Task {
            try await clock.sleep(for: timeout)
            events.yield(.getTimedOut(id: id))
        }
    }

    /// A get not sent within ``ConnectionConfiguration/getConnectTimeout`` fails with `disconnected`.
    func getTimedOut(_ id: Int) {
        guard !sentGets.contains(id), let get = gets.removeValue(forKey: id) else { return }
        get.onComplete(.failure(RequestFailure(status: .disconnected, message: "the client is offline (no connection within the get timeout)")))
    }

    /// Fails every get still waiting (``goOffline()``): none can be answered while offline.
    func failWaitingGets() {
        let waiting = gets.sorted { $0.key < $1.key }
        gets.removeAll()
        sentGets.removeAll()
        for (_, get) in waiting {
            get.onComplete(.failure(RequestFailure(status: .disconnected, message: "the client went offline (goOffline)")))
        }
    }

    func sendGet(_ id: Int) {
        guard let get = gets[id], !sentGets.contains(id) else { return }
        sentGets.insert(id)
        sendRequest("g", body: OutgoingMessage.getBody(path: get.path, query: get.query), expecting: .get(id))
    }

    // MARK: Replies

    func replyReceived(_ number: Int, status: RequestStatus, data: Node) {
        guard let pending = pendingReplies.removeValue(forKey: number) else {
            logger.debug("reply to an unknown request", metadata: ["r": "\(number)"])
            return
        }
        switch pending {
        case .ignored:
            if !status.isOK {
                logger.info("request failed", metadata: ["status": "\(status.status)", "message": "\(status.message ?? "")"])
            }
        case .auth(let initial):
            authAnswered(status, initial: initial)
        case .listen(let key, let serial):
            listenAnswered(key, serial: serial, status: status, data: data)
        case .write(let id):
            writes.removeValue(forKey: id)?.onComplete?(status)
        case .onDisconnect(let id):
            onDisconnectOperations.removeValue(forKey: id)?.onComplete?(status)
        case .get(let id):
            sentGets.remove(id)
            guard let get = gets.removeValue(forKey: id) else { return }
            get.onComplete(status.isOK ? .success(data) : .failure(RequestFailure(status)))
        }
    }
}
