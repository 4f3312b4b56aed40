import SyncProtocol
import CoreTree

/// A whole message from the server, parsed by the client with CoreTree's ``JSONReader`` (data goes
/// straight into nodes). Parsing keeps nulls where they matter: a merge's null values arrive as
/// ``Node/empty`` deletions.
enum IncomingMessage: Sendable {
    /// The handshake (control `h`): server time in ms, session id, host, and the protocol
    /// extensions the server announces (`ext`; none from Firebase).
    case handshake(timestamp: Int64, sessionID: String, host: String?, extensions: [String] = [])
    /// Control `s`: the server tells the client to go away.
    case shutdown(reason: String)
    /// Control `r`: reconnect (the payload names a host).
    case reset(host: String?)
    /// Control `e`: an error to log.
    case error(String)
    /// Another control message (`o` pong and the like), ignored.
    case otherControl(type: String)
    /// The answer to request `number`.
    case reply(number: Int, status: RequestStatus, data: Node)
    /// A `d` or `m` data push.
    case data(DataPush, path: TreePath, tag: Int?)
    /// A merge push with no children, ignored.
    case emptyMerge
    /// A `c` push: the listens at `path` are revoked.
    case listenRevoked(path: TreePath)
    /// An `ac` push: the auth token is revoked.
    case authRevoked(status: WireStatus, reason: String?)
    /// Another push (`apc`, `sd`, `rm`, ...), logged and ignored.
    case otherPush(action: String)

    /// Parses one whole message.
    ///
    /// - Throws: ``ProtocolError`` (`malformedFrame`) for text that is not a server message.
    static func parse(_ text: String) throws(ProtocolError) -> IncomingMessage {
        do {
            return try JSONReader.read(text) { reader throws(CoreTreeError) in
                var type: String?
                var message: IncomingMessage?
                try reader.beginObject()
                while let key = try reader.nextKey() {
                    switch key {
                    case "t": type = try reader.readString()
                    case "d":
                        // "t" comes first in every server's envelopes; read "d" by its type.
                        switch type {
                        case "c": message = try control(&reader)
                        case "d": message = try data(&reader)
                        default: throw malformed("a message must be {\"t\": \"d\" or \"c\", \"d\": {…}}")
                        }
                    default: try reader.skipValue()
                    }
                }
                guard let message else { throw malformed("a message must be {\"t\": \"d\" or \"c\", \"d\": {…}}") }
                return message
            }
        } catch {
            throw ProtocolError(.malformedFrame, "Malformed server message: \(error.message)", underlying: error)
        }
    }

    private static func control(_ reader: inout JSONReader) throws(CoreTreeError) -> IncomingMessage {
        var type: String?
        var timestamp: Int64?
        var session: String?
        var host: String?
        var extensions: [String] = []
        var text: String?
        var sawBody = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "t": type = try reader.readString()
            case "d":
                sawBody = true
                switch try reader.peek() {
                case .object:
                    try reader.beginObject()
                    while let field = try reader.nextKey() {
                        switch field {
                        case "ts": timestamp = try integer(&reader).map(Int64.init)
                        case "s": session = try optionalString(&reader)
                        case "h": host = try optionalString(&reader)
                        case "ext":
                            guard try reader.peek() == .array else {
                                try reader.skipValue()
                                continue
                            }
                            try reader.beginArray()
                            while try reader.nextElement() {
                                if let name = try optionalString(&reader) { extensions.append(name) }
                            }
                        default: try reader.skipValue()
                        }
                    }
                case .string: text = try reader.readString()
                default: try reader.skipValue()
                }
            default: try reader.skipValue()
            }
        }
        guard let type else { throw malformed("a control message needs d.t") }
        switch type {
        case "h":
            guard let timestamp, let session else { throw malformed("a handshake needs ts and s") }
            return .handshake(timestamp: timestamp, sessionID: session, host: host, extensions: extensions)
        case "s": return .shutdown(reason: text ?? "")
        case "r": return .reset(host: text)
        case "e": return .error(text ?? (sawBody ? "(no message)" : "null"))
        default: return .otherControl(type: type)
        }
    }

    private static func data(_ reader: inout JSONReader) throws(CoreTreeError) -> IncomingMessage {
        var number: Int?
        var sawNumber = false
        var action: String?
        var body = PushBody()
        var sawBody = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "r":
                sawNumber = true
                number = try integer(&reader)
            case "a": action = try reader.readString()
            case "b":
                sawBody = true
                body = try PushBody.read(&reader, action: sawNumber ? "" : action)
            default: try reader.skipValue()
            }
        }
        try body.finish(action: sawNumber ? "" : action)
        if sawNumber {
            guard let number else { throw malformed("a reply needs an integer d.r") }
            guard let status = body.status else { throw malformed("a reply needs b.s") }
            let wireStatus = WireStatus(rawValue: status)
            let message = wireStatus.isOK ? nil : body.message
            return .reply(number: number, status: RequestStatus(status: wireStatus, message: message), data: body.data)
        }
        guard let action, sawBody else { throw malformed("a push needs d.a and d.b") }
        switch action {
        case "d":
            return .data(.overwrite(body.data), path: try body.requirePath(), tag: try body.requireTag())
        case "m":
            guard let children = body.mergeChildren else { throw malformed("a merge push needs an object in b.d") }
            if children.isEmpty { return .emptyMerge }
            return .data(.merge(children.sorted { $0.path < $1.path }), path: try body.requirePath(), tag: try body.requireTag())
        case "c":
            return .listenRevoked(path: try body.requirePath())
        case "ac":
            return .authRevoked(status: WireStatus(rawValue: body.status ?? ""), reason: body.message)
        default:
            return .otherPush(action: action)
        }
    }

    /// The fields of a reply's or push's body (`b`). The data (`d`) of a merge push is read member
    /// by member, nulls included (they are deletions); any other data is read as one node. When
    /// the body comes before the action says which, the data is kept as text and read after.
    private struct PushBody {
        var path: String?
        var tag: Int?
        var tagIsInvalid = false
        var status: String?
        var message: String?
        var data = Node.empty
        var mergeChildren: [(path: TreePath, node: Node)]?
        var rawData: String?

        static func read(_ reader: inout JSONReader, action: String?) throws(CoreTreeError) -> PushBody {
            var body = PushBody()
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "p": body.path = try optionalString(&reader)
                case "t":
                    if try reader.readNullIfPresent() { continue }
                    body.tag = try integer(&reader)
                    body.tagIsInvalid = body.tag == nil
                case "s": body.status = try optionalString(&reader)
                case "d":
                    if try reader.peek() == .string {
                        let text = try reader.readString()
                        body.message = text
                        body.data = Node(.string(text))
                    } else if let action {
                        try body.readData(&reader, action: action)
                    } else {
                        body.rawData = try reader.readRawValue()
                    }
                default: try reader.skipValue()
                }
            }
            return body
        }

        /// Reads data kept as text now that the action is known.
        mutating func finish(action: String?) throws(CoreTreeError) {
            guard let raw = rawData else { return }
            rawData = nil
            try JSONReader.read(raw) { reader throws(CoreTreeError) in try readData(&reader, action: action ?? "") }
        }

        private mutating func readData(_ reader: inout JSONReader, action: String) throws(CoreTreeError) {
            guard action == "m", try reader.peek() == .object else {
                data = try reader.readNode()
                return
            }
            var children: [(path: TreePath, node: Node)] = []
            try reader.beginObject()
            while let member = try reader.nextKey() {
                children.append((TreePath(unchecked: member), try reader.readNode()))
            }
            mergeChildren = children
        }

        func requirePath() throws(CoreTreeError) -> TreePath {
            guard let path else { throw malformed("a push needs a path in b.p") }
            return TreePath(unchecked: path)
        }

        func requireTag() throws(CoreTreeError) -> Int? {
            if tagIsInvalid { throw malformed("a push tag (b.t) must be an integer") }
            return tag
        }
    }

    /// A string, or `nil` for another kind of value (which is skipped).
    private static func optionalString(_ reader: inout JSONReader) throws(CoreTreeError) -> String? {
        if try reader.peek() == .string { return try reader.readString() }
        try reader.skipValue()
        return nil
    }

    /// A JSON number that is an integer, or `nil` for anything else (which is skipped).
    private static func integer(_ reader: inout JSONReader) throws(CoreTreeError) -> Int? {
        guard try reader.peek() == .number else {
            try reader.skipValue()
            return nil
        }
        let number = try reader.readNumber()
        return Int(exactly: number)
    }

    private static func malformed(_ problem: String) -> CoreTreeError {
        CoreTreeError(.malformedJSON, problem)
    }
}
