import CoreTree

/// The fields of a client request's body (`b`), read with CoreTree's ``JSONReader``: data goes
/// straight into nodes, and nulls keep their meaning (a merge's null member deletes that path; a
/// query's `sp: null` is a bound at null).
///
/// A field of the wrong type is remembered as a problem and reported when the action needs it,
/// so the request can still be answered.
struct RequestBody {
    var path: String?
    var pathIsInvalid = false
    var query = Node.empty
    var queryProblem: String?
    var tag: Int?
    var tagIsInvalid = false
    var hash: String?
    var data = Node.empty
    var mergeChildren: [(path: String, node: Node)]?
    var credential: String?
    var authVariable: Node?
    var noAuth = false
    var stamp: WriteStamp?
    var stampProblem: String?

    /// Reads a body whose action is `action` (`nil` when the action is not known yet: then an
    /// object's data is read both ways, as a node and as merge members).
    ///
    /// - Throws: ``CoreTreeError``: `malformedJSON` when the text is not JSON; another code (a
    ///   number out of range, a bad priority) for JSON that is not valid data.
    static func read(_ reader: inout JSONReader, action: String?) throws(CoreTreeError) -> RequestBody {
        var body = RequestBody()
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "p":
                if try reader.peek() == .string { body.path = try reader.readString() } else {
                    try reader.skipValue()
                    body.pathIsInvalid = true
                }
            case "q": try body.readQuery(&reader)
            case "t":
                if try reader.readNullIfPresent() { continue }
                if try reader.peek() == .number {
                    body.tag = try reader.readWireInteger().flatMap { Int(exactly: $0) }
                    body.tagIsInvalid = body.tag == nil
                } else {
                    try reader.skipValue()
                    body.tagIsInvalid = true
                }
            case "h":
                if try reader.peek() == .string { body.hash = try reader.readString() } else { try reader.skipValue() }
            case "d": try body.readData(&reader, action: action)
            case "cred":
                if try reader.peek() == .string { body.credential = try reader.readString() } else { try reader.skipValue() }
            case "authvar":
                do {
                    body.authVariable = try reader.readNode()
                } catch {
                    throw CoreTreeError(error.code, "b.authvar: \(error.message)", underlying: error)
                }
            case "once": try body.readStamp(&reader)
            case "noauth":
                if try reader.peek() == .bool { body.noAuth = try reader.readBool() } else { try reader.skipValue() }
            default: try reader.skipValue()
            }
        }
        return body
    }

    /// Reads `b.once`: `{"c": client, "s": sequence, "f": floor}`.
    private mutating func readStamp(_ reader: inout JSONReader) throws(CoreTreeError) {
        if try reader.readNullIfPresent() { return }
        let problem = "An exactly-once stamp (b.once) must be {\"c\": client id, \"s\": sequence ≥ 1, \"f\": floor ≤ sequence}."
        guard try reader.peek() == .object else {
            try reader.skipValue()
            stampProblem = problem
            return
        }
        var client: String?
        var sequence: Int64?
        var floor: Int64?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch (key, try reader.peek()) {
            case ("c", .string): client = try reader.readString()
            case ("s", .number): sequence = try reader.readWireInteger()
            case ("f", .number): floor = try reader.readWireInteger()
            default: try reader.skipValue()
            }
        }
        guard let client, WriteStamp.isValidClient(client), let sequence, sequence >= 1, let floor, floor >= 0, floor <= sequence else {
            stampProblem = problem
            return
        }
        stamp = WriteStamp(client: client, sequence: sequence, floor: floor)
    }

    private mutating func readQuery(_ reader: inout JSONReader) throws(CoreTreeError) {
        switch try reader.peek() {
        case .null:
            _ = try reader.readNullIfPresent()
        case .object:
            var members: [(key: String, value: Node)] = []
            var nullBounds: Set<String> = []
            try reader.beginObject()
            while let key = try reader.nextKey() {
                if try reader.readNullIfPresent() {
                    nullBounds.insert(key)
                    continue
                }
                members.append((key, try reader.readNode()))
            }
            var object = Node.empty
            for member in members { object = object.updatingImmediateChild(ChildKey(member.key), to: member.value) }
            // A bound at null (startAt(null)) is a present `sp` / `ep` whose value vanishes as a
            // node; say that the bound exists by marking its inclusiveness.
            for (value, name, inclusive) in [("sp", "sn", "sin"), ("ep", "en", "ein")] where nullBounds.contains(value) {
                if !object.hasChild(ChildKey(name)) && !object.hasChild(ChildKey(inclusive)) {
                    object = object.updatingImmediateChild(ChildKey(inclusive), to: Node(.bool(true)))
                }
            }
            query = object
        default:
            try reader.skipValue()
            queryProblem = "A query (b.q) must be an object."
        }
    }

    private mutating func readData(_ reader: inout JSONReader, action: String?) throws(CoreTreeError) {
        let mayBeMerge = action == nil || action == "m" || action == "om"
        guard mayBeMerge, try reader.peek() == .object else {
            data = try reader.readNode()
            return
        }
        if action == nil {
            // Not known yet whether this is a merge: keep the text and read it both ways.
            let raw = try reader.readRawValue()
            data = try Node(jsonString: raw)
            try JSONReader.read(raw) { reader throws(CoreTreeError) in try readMembers(&reader) }
            return
        }
        try readMembers(&reader)
    }

    private mutating func readMembers(_ reader: inout JSONReader) throws(CoreTreeError) {
        var children: [(path: String, node: Node)] = []
        try reader.beginObject()
        while let key = try reader.nextKey() {
            children.append((key, try reader.readNode()))
        }
        mergeChildren = children
    }

    func requirePath() throws(ProtocolError) -> TreePath {
        guard let path, !pathIsInvalid else {
            throw ProtocolError(.invalidArgument, "The request needs a path string in b.p.")
        }
        do {
            return try TreePath(validating: path)
        } catch {
            throw ProtocolError(.invalidArgument, error.message, underlying: error)
        }
    }

    func requireTag() throws(ProtocolError) -> Int? {
        if tagIsInvalid { throw ProtocolError(.invalidArgument, "A query tag (b.t) must be an integer, written as digits within ±2^63.") }
        return tag
    }

    func requireStamp() throws(ProtocolError) -> WriteStamp? {
        if let stampProblem { throw ProtocolError(.invalidArgument, stampProblem) }
        return stamp
    }

    func requireQuery() throws(ProtocolError) -> Node {
        if let queryProblem { throw ProtocolError(.invalidArgument, queryProblem) }
        return query
    }

    func requireMergeChildren() throws(ProtocolError) -> [(path: TreePath, node: Node)] {
        guard let mergeChildren else {
            throw ProtocolError(.invalidArgument, "An update (b.d) must be an object of paths to values.")
        }
        var children: [(path: TreePath, node: Node)] = []
        children.reserveCapacity(mergeChildren.count)
        for child in mergeChildren {
            do {
                children.append((try TreePath(validating: child.path), child.node))
            } catch {
                throw ProtocolError(.invalidArgument, error.message, underlying: error)
            }
        }
        return children
    }
}
