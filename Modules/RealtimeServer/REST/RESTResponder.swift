import CoreTree
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import QueryEngine
import RequestParsing
import SecurityRules
import Synchronization
import SyncProtocol
import ServerCore

/// The REST API: `GET`/`PUT`/`PATCH`/`POST`/`DELETE` on `/<path>.json`, query parameters, ETags,
/// event streams, and `/.settings/rules.json`, with errors as `{"error": "…"}` and the status
/// codes the Firebase REST API uses.
struct RESTResponder: HTTPResponder {
    typealias Context = ServerRequestContext

    let registry: NamespaceRegistry
    let configuration: ServerConfiguration
    let activity: ServerActivity
    let verifier: TokenVerifier
    let logger: Logger

    static let defaultRules = "{\"rules\":{\".read\":true,\".write\":true}}"

    func respond(to request: Request, context: Context) async throws -> Response {
        if request.method == .options { return CrossOrigin.preflight(request) }
        let start = ContinuousClock.now
        let response = CrossOrigin.allowing(await answer(request, channel: context.channel))
        record(request, response, since: start, channel: context.channel)
        return response
    }

    /// Counts a data request in the metrics and writes its access log line.
    private func record(_ request: Request, _ response: Response, since start: ContinuousClock.Instant, channel: any Channel) {
        let path = request.uri.path
        let status = response.status.code
        if path.hasSuffix(".json") && !path.hasPrefix("/.settings/") {
            let metrics = activity.metrics
            switch request.method {
            case .get where response.headers[.contentType] != "text/event-stream":
                metrics.read(.rest)
            case .put, .patch, .post, .delete:
                let result: ServerMetrics.WriteResult =
                    switch status {
                    case 200, 204: .ok
                    case 401: .denied
                    case 412: .stale
                    default: .failed
                    }
                metrics.wrote(.rest, result, since: start)
            default:
                break
            }
        }
        let elapsed = start.duration(to: .now)
        logger.log(level: configuration.accessLogLevel, "http", metadata: [
            "method": "\(request.method.rawValue)", "path": "\(path)",
            "namespace": "\(request.uri.queryParameters["ns"].map(String.init) ?? configuration.defaultNamespace)",
            "status": "\(status)", "bytes": "\(response.body.contentLength.map(String.init) ?? "stream")",
            "ms": "\(String(format: "%.1f", Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15))",
            "peer": "\(ConnectionSummary.peer(of: channel))",
        ])
    }

    /// The answer to a request, errors included.
    private func answer(_ request: Request, channel: any Channel) async -> Response {
        do {
            return try await handle(request, channel: channel)
        } catch let error as ServerError {
            if let cause = error.underlyingError, error.code == .storageFailed {
                logger.error("request failed", metadata: ["error": "\(error.message)", "cause": "\(cause)"])
            }
            return RESTResponder.error(error)
        } catch {
            logger.error("request failed", metadata: ["error": "\(error)"])
            return RESTResponder.error(ServerError(.unavailable, "Internal error; the server log has the details.", underlying: error))
        }
    }

    private func handle(_ request: Request, channel: any Channel) async throws -> Response {
        let target: RESTTarget
        do throws(RequestError) {
            target = try RESTTarget(rawPath: request.uri.path[...], rawQuery: request.uri.query?[...])
        } catch {
            throw ServerError(.invalidArgument, error.message, underlying: error)
        }
        let query = target.parameters
        var method = request.method
        if method == .post, let override = request.headers[HTTPField.Name("X-HTTP-Method-Override")!] ?? query["x-http-method-override"] {
            switch override.uppercased() {
            case "PUT": method = .put
            case "PATCH": method = .patch
            case "DELETE": method = .delete
            default: throw ServerError(.invalidArgument, "X-HTTP-Method-Override must be PUT, PATCH or DELETE, not \(override)")
            }
        }
        let rawPath = target.path
        if OperationsResponder.paths.contains(rawPath) {
            let operations = OperationsResponder(
                configuration: configuration, activity: activity, verifier: verifier, registry: registry, logger: logger)
            return try await operations.respond(path: rawPath, method: method, credential: RESTResponder.credential(request, query), query: query)
        }
        if ConsoleResponder.owns(rawPath) {
            let console = ConsoleResponder(configuration: configuration, activity: activity, verifier: verifier)
            return try await console.respond(path: rawPath, method: method, credential: RESTResponder.credential(request, query), query: query)
        }
        if rawPath == "/.ws" {
            // Not upgraded: say why (the namespace's error, or a missing upgrade).
            let database = try await registry.lease(for: query["ns"], within: configuration.handshakeTimeout)
            await registry.release(database)
            throw ServerError(.invalidArgument, "/.ws takes a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket).")
        }
        guard rawPath.hasSuffix(".json") else {
            throw ServerError(.invalidArgument, "REST paths end in .json, for example /users/ada.json; got \(rawPath)")
        }
        var pathText = String(rawPath.dropLast(5))
        if pathText.hasSuffix("/") { pathText.removeLast() }
        let caller = try await RESTResponder.caller(RESTResponder.credential(request, query), query: query, verifier: verifier)
        let database = try await registry.lease(for: query["ns"])
        // An event stream holds the lease until it ends; any other request until it is answered.
        let streams = method == .get && pathText != "/.settings/rules" && RESTResponder.asksForEventStream(request)
        do {
            let response = try await handle(
                request, method: method, query: query, pathText: pathText, database: database, caller: caller, channel: channel)
            if !streams { await registry.release(database) }
            return response
        } catch {
            await registry.release(database)
            throw error
        }
    }

    /// Answers a request on a leased namespace.
    private func handle(
        _ request: Request, method: HTTPRequest.Method, query: [String: String], pathText: String, database: NamespaceDatabase,
        caller: Caller, channel: any Channel
    ) async throws -> Response {
        if pathText == "/.settings/rules" {
            return try await rules(method: method, request: request, query: query, database: database, isAdmin: caller == .admin)
        }
        let path: TreePath
        do {
            path = try TreePath(validating: pathText)
        } catch {
            throw ServerError(.invalidArgument, error.message)
        }
        if let timeout = query["timeout"] { try RESTResponder.checkTimeout(timeout) }
        if let limit = query["writeSizeLimit"], !["tiny", "small", "medium", "large", "unlimited"].contains(limit) {
            throw ServerError(.invalidArgument, "writeSizeLimit must be tiny, small, medium, large or unlimited, not \(limit)")
        }
        let silent = query["print"] == "silent"
        var format: JSONFormat = query["format"] == "export" ? .export : .plain
        if query["print"] == "pretty" { format.insert(.prettyPrinted) }

        switch method {
        case .get:
            let params: QueryParams
            do throws(RequestError) {
                params = try RESTQuery.params(query)
            } catch {
                throw ServerError(.invalidArgument, error.message, underlying: error)
            }
            if RESTResponder.asksForEventStream(request) {
                try await database.authorizeRead(path, params: params, as: caller)
                return await stream(database: database, path: path, params: params, caller: caller, channel: channel)
            }
            // A shallow read seeks child to child in the store: its cost is the number of
            // children, whatever their size. Object children become true; primitives keep their value.
            let data = query["shallow"] == "true"
                ? try await database.readShallow(path, as: caller) : try await database.read(path, params: params, as: caller)
            let etag = RESTResponder.etag(data)
            if let expected = request.headers[.ifNoneMatch], expected == etag {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            var headers = HTTPFields()
            if request.headers[HTTPField.Name("X-Firebase-ETag")!] == "true" || request.headers[.ifNoneMatch] != nil {
                headers[.eTag] = etag
            }
            return RESTResponder.json(data.jsonString(format: format), headers: headers, silent: silent)
        case .put, .delete:
            // The body's reader checks its data where it goes, so the database checks only the path.
            let node: Node = method == .delete ? .empty : try await RESTBody.node(of: request, at: path)
            let condition = try RESTResponder.condition(request)
            let result = await database.write(dataChecked: .set(path: path, node: node), condition: condition, as: caller)
            return try RESTResponder.respond(result, format: format, silent: silent, withETag: condition != nil || request.headers[HTTPField.Name("X-Firebase-ETag")!] == "true")
        case .patch:
            let children = try await RESTBody.update(of: request, at: path)
            if children.isEmpty {
                return RESTResponder.json("{}", silent: silent)
            }
            let result = await database.write(dataChecked: .update(path: path, children: children), as: caller)
            switch result {
            case .committed(let value):
                func echo() -> Node {
                    Node(children: children.map { (key: ChildKey($0.path.relativeForm), value: value.child(at: $0.path)) })
                }
                return RESTResponder.json(echo().jsonString(format: format), silent: silent)
            default:
                return try RESTResponder.respond(result, format: format, silent: silent, withETag: false)
            }
        case .post:
            let node = try await RESTBody.node(of: request)
            let name = await database.nextPushID()
            let result = await database.write(.set(path: path.child(ChildKey(name)), node: node), as: caller)
            if case .committed = result {
                return RESTResponder.json("{\"name\":\(ServerMessage.quoted(name))}", silent: silent)
            }
            return try RESTResponder.respond(result, format: format, silent: silent, withETag: false)
        default:
            return RESTResponder.error(ServerError(.invalidArgument, "Method \(method) is not supported; use GET, PUT, PATCH, POST or DELETE."), status: .methodNotAllowed)
        }
    }

    // MARK: - Rules

    private func rules(method: HTTPRequest.Method, request: Request, query: [String: String], database: NamespaceDatabase,
                       isAdmin: Bool) async throws -> Response {
        guard isAdmin else { throw ServerError(.permissionDenied, "Permission denied") }
        switch method {
        case .get:
            let text = query["format"] == "strict" ? await database.rulesStrictJSON : await database.storedRulesText ?? RESTResponder.defaultRules
            return RESTResponder.json(text)
        case .put:
            let body = try await RESTBody.bytes(of: request)
            do {
                try await database.installRules(String(decoding: body, as: UTF8.self))
            } catch let error as RulesError {
                throw ServerError(.invalidArgument, "The rules were not installed: \(error)")
            }
            return RESTResponder.json("{\"status\":\"ok\"}")
        default:
            throw ServerError(.invalidArgument, "/.settings/rules.json supports GET and PUT.")
        }
    }

    // MARK: - Streaming

    /// An event stream: the listen's updates as `put`/`patch` events until the client goes away
    /// (noticed at once, by ``ClientGoneHandler``), the stream is cancelled, or the client reads
    /// too slowly for the outbox's caps. Then the listen is removed and the queue freed.
    private func stream(database: NamespaceDatabase, path: TreePath, params: QueryParams, caller: Caller, channel: any Channel) async -> Response {
        let outbox = Outbox(maxQueuedBytes: configuration.maxQueuedBytesPerConnection, budget: activity.outbound) { [logger, metrics = activity.metrics] in
            logger.warning("ending an event stream whose client reads too slowly", metadata: [
                "namespace": "\(database.name)", "peer": "\(ConnectionSummary.peer(of: channel))",
            ])
            metrics.slowClientDisconnected(.rest)
            channel.close(promise: nil)
        }
        let subscriber = EventStreamSubscriber(outbox: outbox)
        let interval = configuration.keepAliveInterval
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await configuration.clock.sleep(for: interval)
                if Task.isCancelled { break }
                subscriber.keepAlive()
            }
        }
        let (activity, registry) = (self.activity, self.registry)
        activity.eventStreamOpened()
        let record = activity.directory.open(
            transport: .eventStream, namespace: database.name, remoteAddress: channel.remoteAddress.map(ConnectionSummary.address),
            path: path.description, caller: caller)
        record.update(caller: caller, listens: 1, onDisconnectWrites: 0)
        activity.metrics.listenAdded(.rest)
        // The cleanup is in place before the shutdown registration below: registered while a
        // shutdown is under way, the stream is ended at once, and a termination handler set after
        // the stream finished would never run.
        let departure = Mutex(StreamDeparture.pending)
        outbox.onTermination {
            keepAlive.cancel()
            activity.eventStreamClosed()
            let registered = departure.withLock { state -> Int? in
                defer { state = .ended }
                if case .registered(let key) = state { return key }
                return nil
            }
            if let registered { activity.withdraw(registered) }
            record.close()
            activity.metrics.listenRemoved(.rest)
            Task {
                await database.unlisten(subscriber, path: path, params: params, tag: nil)
                await registry.release(database)
            }
        }
        // At shutdown the client hears `retry` (reconnect in a second) in a final event, then the stream ends.
        // (Registered outside the lock: during a shutdown the polite end runs at once, and with it
        // the termination handler. A stream that ended first withdraws its registration here.)
        let key = activity.onShutdown(polite: { subscriber.depart() })
        let endedFirst = departure.withLock { state in
            if case .ended = state { return true }
            state = .registered(key)
            return false
        }
        if endedFirst { activity.withdraw(key) }
        let watcher = ClientGoneHandler { subscriber.close() }
        channel.pipeline.addHandler(watcher, position: .first).whenFailure { _ in subscriber.close() }
        do {
            try await database.listen(subscriber, path: path, params: params, tag: nil, as: caller)
        } catch {
            // The rules changed between the check and the listen: the stream says so and ends.
            subscriber.end(event: "cancel", data: "null")
        }
        let events = subscriber.events
        let body = ResponseBody { writer in
            for await batch in events {
                var buffer = ByteBuffer()
                for text in batch { buffer.writeString(text) }
                try await writer.write(buffer)
                outbox.didWrite(batch)
            }
            try await writer.finish(nil)
            // The stream ended (a cancel, the shutdown's last event, a slow reader): the
            // connection ends with it, after what was written, as Firebase's does.
            RawHTTPResponse.closeGently(channel)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body)
    }

    // MARK: - Helpers

    /// Whether a GET asks for an event stream rather than the data.
    private static func asksForEventStream(_ request: Request) -> Bool {
        request.headers[.accept]?.contains("text/event-stream") == true
    }

    /// Who a request comes from: its credential verified (a bad or expired one is a 401 that says
    /// why), and for administrators `auth_variable_override` (the `auth` their request is judged
    /// as; `null` for unauthenticated).
    private static func caller(_ credential: String?, query: [String: String], verifier: TokenVerifier) async throws -> Caller {
        guard let credential else { return .anonymous }
        let verified: Credential
        do throws(TokenError) {
            verified = try await verifier.verify(credential)
        } catch {
            throw ServerError(.permissionDenied, error.message, underlying: error)
        }
        switch verified {
        case .admin:
            guard let override = query["auth_variable_override"] else { return .admin }
            do {
                let auth = try Node(jsonString: override)
                return .user(auth: auth.isEmpty ? nil : auth)
            } catch {
                throw ServerError(.invalidArgument, "auth_variable_override must be a JSON object or null: \(error.message)")
            }
        case .user(let auth, _):
            return .user(auth: auth)
        }
    }

    private static func credential(_ request: Request, _ query: [String: String]) -> String? {
        if let auth = query["auth"] ?? query["access_token"] { return auth }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") { return String(header.dropFirst(7)) }
        return nil
    }

    /// The ETag of data: its hash, or `null_etag` when there is none.
    static func etag(_ node: Node) -> String { node.isEmpty ? "null_etag" : node.hash }

    private static func condition(_ request: Request) throws(ServerError) -> WriteCondition? {
        guard let expected = request.headers[.ifMatch] else { return nil }
        return .hash(expected == "null_etag" ? "" : expected)
    }

    private static func checkTimeout(_ text: String) throws(ServerError) {
        let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1)]
        for (unit, scale) in units where text.hasSuffix(unit) {
            if let value = Double(text.dropLast(unit.count)), value > 0, value * scale <= 15 * 60 { return }
        }
        throw ServerError(.invalidArgument, "timeout must be a positive number of ms, s or min, at most 15min; got \(text)")
    }

    private static func respond(_ result: WriteResult, format: JSONFormat, silent: Bool, withETag: Bool) throws -> Response {
        switch result {
        case .committed(let value):
            var headers = HTTPFields()
            if withETag { headers[.eTag] = etag(value) }
            return json(value.jsonString(format: format), headers: headers, silent: silent)
        case .stale(let current):
            return Response(
                status: .preconditionFailed, headers: [.eTag: etag(current), .contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: current.jsonString(format: format))))
        case .failed(let error):
            throw error
        }
    }

    /// A JSON response, or an empty 204 for `print=silent`: `text` is only written out when it is
    /// sent (a silent PATCH of 8 MB spent a tenth of its CPU writing the echo it never sent).
    static func json(_ text: @autoclosure () -> String, headers: HTTPFields = [:], silent: Bool = false) -> Response {
        if silent { return Response(status: .noContent, headers: headers) }
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text())))
    }

    static func error(_ error: ServerError, status: HTTPResponse.Status? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if error.code == .unavailable { headers[.retryAfter] = "1" }
        return Response(
            status: status ?? HTTPResponse.Status(code: error.httpStatus),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: RawHTTPResponse.errorJSON(error.message))))
    }
}

/// An event stream's shutdown registration, as its termination handler sees it.
private enum StreamDeparture {
    /// Not registered yet.
    case pending
    /// Registered under this key.
    case registered(Int)
    /// The stream ended; a registration made now is withdrawn at once.
    case ended
}
