/// Reads a JSON document (plain or export format) handed over in chunks of any size, as a
/// sequence of complete subtrees small enough to hold in memory and write in batches.
///
/// A value that ends within ``subtreeBytes`` bytes of its start is parsed whole, by the same
/// parser as ``Node/init(json:)-(Sequence<UInt8>)``, and comes out as one ``JSONStreamItem``; a
/// larger object or array comes out member by member, recursively, and its priority after its
/// members. Applying the items in order (``JSONStreamItem/apply(to:)``) gives the tree the
/// whole-document parser gives, priorities (`.priority`, `.value`) and server-value
/// placeholders (`.sv`) included. Memory stays within about ``subtreeBytes`` plus the chunk being
/// read (a single string, number, `.value` or `.priority` member may take up to
/// ``maxValueBytes``), whatever the document's size.
///
/// Unlike the whole-document parser, the reader also checks what it reads as a write would be
/// checked (``Validation/validateWrite(_:at:)``): keys, depth, path length, string sizes and
/// server values. A member of a large object is checked when its value is not null, also when
/// a later member of the same name replaces it (the whole-document parser keeps only the last).
///
/// ```swift
/// var reader = JSONStreamReader()
/// while let chunk = try file.read(upToCount: 1 << 20), !chunk.isEmpty {
///     for item in try reader.read(chunk) { try write(item) }
/// }
/// for item in try reader.finish() { try write(item) }
/// ```
///
/// Every error is a ``CoreTreeError`` that names the document byte where the problem is (for a
/// problem found in a value read whole, the byte where that value starts). After an error the
/// reader throws it again on every call.
public struct JSONStreamReader: Sendable {
    /// The default ``subtreeBytes``: 1 MiB.
    public static let defaultSubtreeBytes = 1 << 20
    /// The default ``maxValueBytes``: 64 MiB, room for a 10 MB string written with escapes.
    public static let defaultMaxValueBytes = 64 << 20

    /// Values up to this many bytes of JSON come out whole; larger objects and arrays come out
    /// member by member.
    public let subtreeBytes: Int
    /// The longest a single string, number, member name, `.value` or `.priority` member may be,
    /// in bytes of JSON.
    public let maxValueBytes: Int

    /// The unconsumed part of the document: from the start of the value or token being read.
    private var buffer: [UInt8] = []
    /// The index in ``buffer`` of the next byte to read.
    private var position = 0
    /// The document offset of `buffer[0]`.
    private var bufferStart = 0
    private var atEnd = false
    private var phase = Phase.beforeRoot
    /// The large objects and arrays being read, outermost first.
    private var frames: [Frame] = []
    /// The scan of the value at ``position``, kept while its end has not arrived yet.
    private var extent: JSONValueExtent?
    private var items: [JSONStreamItem] = []
    private var failure: CoreTreeError?
    /// The document byte of the failure, when it concerns data (a name, a value).
    private var failureByte: Int?
    /// Whether this reader reads a value again to find where its problem lies.
    private var locating = false
    /// How many open frames have a ``Frame/problem``.
    private var framesWithProblems = 0
    /// Whether the value ``parseValue(nesting:)`` read last held a `.sv` member.
    private var parsedServerValue = false
    /// Whether the document is an update: an object whose member names are paths.
    private let isUpdate: Bool
    /// Where the document is written: its data is checked as written there.
    public let location: TreePath

    private enum Phase { case beforeRoot, inRoot, afterRoot }

    /// A reader that emits values of up to `subtreeBytes` bytes whole.
    ///
    /// - Parameters:
    ///   - subtreeBytes: the largest value (in bytes of JSON) emitted as one item; at least 1.
    ///   - maxValueBytes: the largest single string, number, member name, `.value` or `.priority`
    ///     member accepted; at least `subtreeBytes`.
    ///   - location: where the document is written (a REST body's path): its data is checked as
    ///     ``Validation/validateWrite(_:at:)`` checks it there, so the depth and length limits
    ///     count the location's keys. Items still come out under paths relative to the document.
    public init(subtreeBytes: Int = defaultSubtreeBytes, maxValueBytes: Int = defaultMaxValueBytes, location: TreePath = .root) {
        self.init(subtreeBytes: subtreeBytes, maxValueBytes: maxValueBytes, isUpdate: false, location: location)
    }

    /// A reader of an update (a REST PATCH body, a multi-path update): a JSON object whose member
    /// names are slash-separated paths and whose values are the data to put there, `null` to
    /// remove.
    ///
    /// Every member comes out under a path of one key, the member's name as written (slashes
    /// included): first an item holding its whole value (empty for `null`), or, for a value
    /// larger than `subtreeBytes`, an empty item followed by the value's pieces below that key.
    /// Member names are checked as paths (``TreePath/init(validating:)``), not as keys, and
    /// `.priority`, `.value` and `.sv` are ordinary names at the top. A document that is not an
    /// object is refused.
    ///
    /// `location` is where the update is applied: each member's data is checked as written at
    /// the location's path followed by the member's.
    public static func update(subtreeBytes: Int = defaultSubtreeBytes, maxValueBytes: Int = defaultMaxValueBytes,
                              location: TreePath = .root) -> JSONStreamReader {
        JSONStreamReader(subtreeBytes: subtreeBytes, maxValueBytes: maxValueBytes, isUpdate: true, location: location)
    }

    private init(subtreeBytes: Int, maxValueBytes: Int, isUpdate: Bool, location: TreePath) {
        self.subtreeBytes = max(1, subtreeBytes)
        self.maxValueBytes = max(self.subtreeBytes, maxValueBytes)
        self.isUpdate = isUpdate
        self.location = location
    }

    /// Bytes of the document handed over so far.
    public var bytesRead: Int { bufferStart + buffer.count }

    /// Bytes of the document the reader holds now: the value it waits to see the end of, and
    /// what it has read but not yet dropped.
    public var bufferedBytes: Int { buffer.count }

    /// Reads the next chunk of the document and returns the items it completed, in order.
    ///
    /// - Throws: ``CoreTreeError`` naming the byte where the document is malformed or its data
    ///   cannot be stored.
    /// - Complexity: O(chunk size), amortised, plus the parsing of the values it completes.
    public mutating func read(_ chunk: some Sequence<UInt8>) throws(CoreTreeError) -> [JSONStreamItem] {
        if let failure { throw failure }
        guard !atEnd else { throw CoreTreeError(.malformedJSON, "The document was already finished; start a new reader.") }
        compact()
        buffer.append(contentsOf: chunk)
        return try proceed()
    }

    /// Ends the document and returns the items that its end completed.
    ///
    /// - Throws: ``CoreTreeError`` when the document ends early or is malformed.
    public mutating func finish() throws(CoreTreeError) -> [JSONStreamItem] {
        if let failure { throw failure }
        atEnd = true
        return try proceed()
    }

    private mutating func proceed() throws(CoreTreeError) -> [JSONStreamItem] {
        do {
            try run()
        } catch {
            failure = error
            items = []
            throw error
        }
        defer { items = [] }
        return items
    }

    /// Drops the bytes already consumed when they are a good part of the buffer.
    private mutating func compact() {
        guard position > 0, position >= 1 << 16 || position * 2 >= buffer.count else { return }
        buffer.removeSubrange(0..<position)
        bufferStart += position
        position = 0
    }

    // MARK: - The document

    /// Reads as far as the bytes at hand go.
    private mutating func run() throws(CoreTreeError) {
        while true {
            switch phase {
            case .beforeRoot:
                skipWhitespace()
                if position == buffer.count {
                    if atEnd { throw malformed("unexpected end of input", at: offset) }
                    return
                }
                let start = offset
                if isUpdate {
                    guard buffer[position] == UInt8(ascii: "{") else {
                        failureByte = start
                        throw CoreTreeError(.invalidValue, "At byte \(start): an update must be a JSON object of paths to values.")
                    }
                    try openFrame(path: .root, nesting: 1, isArray: false)
                    phase = .inRoot
                    continue
                }
                switch try readValue(nesting: 0, whole: false) {
                case nil:
                    return
                case .node(let node)?:
                    if !node.isEmpty {
                        try checked(node, at: .root, start: start)
                        items.append(JSONStreamItem(path: .root, node: node, containsServerValues: parsedServerValue))
                    }
                    phase = .afterRoot
                case .large(let isArray)?:
                    try openFrame(path: .root, nesting: 1, isArray: isArray)
                    phase = .inRoot
                }
            case .inRoot:
                guard try step() else { return }
            case .afterRoot:
                skipWhitespace()
                if position < buffer.count { throw malformed("unexpected data after the JSON value", at: offset) }
                return
            }
        }
    }

    /// The document offset of the next byte.
    private var offset: Int { bufferStart + position }

    private mutating func skipWhitespace() {
        while position < buffer.count {
            switch buffer[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private func malformed(_ what: String, at offset: Int) -> CoreTreeError {
        CoreTreeError(.malformedJSON, "Malformed JSON at byte \(offset): \(what).")
    }

    /// Where the data at the item path `path` is written: below ``location``, and in an update
    /// the member's name (the path's first key) read as the path it is, so the limits count each
    /// of its keys.
    private func writtenPath(of path: TreePath) -> TreePath {
        guard isUpdate, let member = path.firstKey else { return location.isRoot ? path : location.appending(path) }
        return TreePath(keys: location.keys + TreePath(unchecked: member.stringValue).keys + path.keys.dropFirst())
    }

    /// `node` (read whole from document byte `start` up to ``position``) checked as a write at
    /// `path` (an item path; see ``writtenPath(of:)``); a problem names its byte.
    private mutating func checked(_ node: Node, at path: TreePath, start: Int) throws(CoreTreeError) {
        do {
            try Validation.validateWrite(node, at: writtenPath(of: path))
        } catch {
            // A leaf's byte is its own; a reader locating a problem does not look further.
            let byte = node.isLeaf || locating ? start : problemByte(of: error, inValueFrom: start) ?? start
            failureByte = byte
            throw CoreTreeError(error.code, "At byte \(byte): \(error.message)", underlying: error)
        }
    }

    /// The byte of the problem `error` found in the value from document byte `start` to
    /// ``position``, found by reading the value again member by member (every name then checked
    /// at its own byte): a failure's path only, so no cost while the document is good. `nil` when
    /// the value is gone from the buffer or the problem does not show again that way (a path too
    /// deep or too long for where the value lies).
    private func problemByte(of error: CoreTreeError, inValueFrom start: Int) -> Int? {
        guard start >= bufferStart, start - bufferStart <= position else { return nil }
        var again = JSONStreamReader(subtreeBytes: 1, maxValueBytes: maxValueBytes)
        again.bufferStart = start
        again.locating = true
        do throws(CoreTreeError) {
            _ = try again.read(buffer[(start - bufferStart)..<position])
            _ = try again.finish()
        } catch where again.failure?.code == error.code {
            return again.failureByte
        } catch {}
        return nil
    }

    // MARK: - Values

    private enum ValueOutcome {
        /// The value, read whole.
        case node(Node)
        /// An object or array longer than ``subtreeBytes``, to be read member by member.
        case large(isArray: Bool)
    }

    /// Reads the value at ``position``: whole when it ends within ``subtreeBytes`` (or
    /// ``maxValueBytes`` when `whole`); a larger object or array is reported, not read. Returns
    /// `nil` when the bytes at hand end inside the value.
    private mutating func readValue(nesting: Int, whole: Bool) throws(CoreTreeError) -> ValueOutcome? {
        let first = buffer[position]
        let kind: JSONValueExtent.Kind
        switch first {
        case UInt8(ascii: "{"), UInt8(ascii: "["): kind = .container
        case UInt8(ascii: "\""): kind = .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            kind = .scalar
        default:
            return .node(try parseValue(nesting: nesting))  // the parser names the unexpected character
        }
        let limit = kind == .container && !whole ? subtreeBytes : maxValueBytes
        var scan = extent ?? JSONValueExtent(kind: kind, start: offset)
        let outcome = buffer.withUnsafeBufferPointer { scan.scan($0, bytesStart: bufferStart, limit: limit) }
        switch outcome {
        case .complete:
            extent = nil
            return .node(try parseValue(nesting: nesting))
        case .incomplete where atEnd:
            // The document ends inside the value: the parser says where and how.
            extent = nil
            return .node(try parseValue(nesting: nesting))
        case .incomplete:
            extent = scan
            return nil
        case .tooLarge:
            extent = nil
            guard kind == .container, !whole else {
                let what = whole ? "member" : kind == .string ? "string" : "number or literal"
                throw CoreTreeError(
                    .valueTooLarge, "At byte \(offset): a \(what) longer than \(maxValueBytes) bytes cannot be read; no value may be that large.")
            }
            return .large(isArray: first == UInt8(ascii: "["))
        }
    }

    /// Parses the value at ``position`` with the whole-document parser and moves past it.
    /// Parses the value at ``position`` with the whole-document parser and moves past it;
    /// ``parsedServerValue`` tells whether it held a `.sv` member.
    private mutating func parseValue(nesting: Int) throws(CoreTreeError) -> Node {
        let start = position
        let documentOffset = offset
        var parsed: (node: Node, length: Int, serverValue: Bool)?
        var failure: CoreTreeError?
        buffer.withUnsafeBufferPointer { bytes in
            var parser = JSONParser(bytes: UnsafeBufferPointer(rebasing: bytes[start...]), nesting: nesting, offset: documentOffset)
            do throws(CoreTreeError) {
                let node = try parser.parseValue()
                parsed = (node, parser.position, parser.sawServerValue)
            } catch {
                failure = error
            }
        }
        guard let parsed else { throw failure! }
        position = start + parsed.length
        parsedServerValue = parsed.serverValue
        return parsed.node
    }

    /// Parses the member name at ``position`` (a complete string) and moves past it.
    private mutating func parseName() throws(CoreTreeError) -> String {
        let start = position
        let documentOffset = offset
        let result: Result<(String, Int), CoreTreeError> = buffer.withUnsafeBufferPointer { bytes in
            var parser = JSONParser(bytes: UnsafeBufferPointer(rebasing: bytes[start...]), offset: documentOffset)
            return Result { () throws(CoreTreeError) in (try parser.parseString(), parser.position) }
        }
        let (name, length) = try result.get()
        position = start + length
        return name
    }

    // MARK: - Large objects and arrays

    /// A large object or array being read member by member.
    private struct Frame {
        enum Expect { case firstMember, name, colon, value, separator }

        let path: TreePath
        let isArray: Bool
        let nesting: Int
        /// Where the object or array starts in the document.
        let start: Int
        var expect = Expect.firstMember
        /// The member being read: its name and where that starts.
        var name = ""
        var nameOffset = 0
        /// The next array position.
        var index = 0
        /// The greatest member name so far (in key order): a name not above it may repeat one.
        var greatestKey: ChildKey?
        /// Whether the member being read may repeat an earlier one.
        var replacing = false
        var data = DataSeen.none
        /// Why the data below this frame cannot be stored (a bad name, a path too deep or too
        /// long), thrown when the first data below it comes: an object that turns out empty
        /// writes nothing, and is accepted as validation accepts it.
        var problem: CoreTreeError?
        /// The byte ``problem`` concerns.
        var problemByte = 0
        /// Whether its `.value`, `.priority` or `.sv` member held a server value.
        var serverValues = false
        var explicitValue: Node?
        /// The `.sv` member: with no other member, the object is a server-value placeholder.
        var serverValue: Node?
        var priority: Priority?
        var placeholderPriority: Node?
    }

    /// What an object or array is known to hold from the items emitted for it so far.
    private enum DataSeen {
        /// Nothing.
        case none
        /// Data that is still there.
        case some
        /// Perhaps nothing: a later member removed what an earlier one with the same name wrote.
        case unknown

        /// The parent's knowledge once a child with `child` closes.
        func adding(_ child: DataSeen) -> DataSeen {
            switch (self, child) {
            case (_, .none): self
            case (_, .some), (.some, _): .some
            default: .unknown
            }
        }
    }

    /// Pushes the frame of the large object or array at ``position``; `problem` is why data
    /// below it cannot be stored, if anything.
    private mutating func openFrame(
        path: TreePath, nesting: Int, isArray: Bool, problem: (error: CoreTreeError, byte: Int)? = nil
    ) throws(CoreTreeError) {
        if nesting > JSONParser.maxNesting { throw malformed("nesting deeper than \(JSONParser.maxNesting) levels", at: offset) }
        var problem = problem
        if problem == nil {
            do {
                try Validation.validatePathLimits(path, context: "Path \"\(path.wireForm)\"")
            } catch {
                problem = (CoreTreeError(error.code, "At byte \(offset): \(error.message)", underlying: error), offset)
            }
        }
        if problem != nil { framesWithProblems += 1 }
        frames.append(Frame(path: path, isArray: isArray, nesting: nesting, start: offset, problem: problem?.error, problemByte: problem?.byte ?? 0))
        position += 1
    }

    /// Adds an item that writes data, once no open frame says data below it cannot be stored.
    private mutating func emitData(_ item: JSONStreamItem) throws(CoreTreeError) {
        if framesWithProblems > 0, let frame = frames.first(where: { $0.problem != nil }), let problem = frame.problem {
            failureByte = frame.problemByte
            throw problem
        }
        items.append(item)
    }

    /// Reads the next token of the innermost frame; `false` when the bytes at hand end first.
    private mutating func step() throws(CoreTreeError) -> Bool {
        let top = frames.count - 1
        skipWhitespace()
        let isArray = frames[top].isArray
        guard position < buffer.count else {
            guard atEnd else { return false }
            switch frames[top].expect {
            case .separator: throw malformed(isArray ? "unexpected end of input in an array" : "unexpected end of input in an object", at: offset)
            case .firstMember where !isArray, .name: throw malformed("expected a member name", at: offset)
            case .colon: throw malformed("expected \":\"", at: offset)
            case .firstMember, .value: throw malformed("unexpected end of input", at: offset)
            }
        }
        let byte = buffer[position]
        let close = isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")
        switch frames[top].expect {
        case .firstMember where byte == close:
            position += 1
            try closeFrame()
        case .firstMember where !isArray, .name:
            guard byte == UInt8(ascii: "\"") else { throw malformed("expected a member name", at: offset) }
            let nameOffset = offset
            guard let name = try readName() else { return false }
            frames[top].name = name
            frames[top].nameOffset = nameOffset
            frames[top].expect = .colon
            if !isSpecial(name, inFrame: top) {
                // A name not above every earlier one may repeat one, whose value this one replaces.
                let key = ChildKey(name)
                let replacing = frames[top].greatestKey.map { ChildKey.compare(key, $0) <= 0 } ?? false
                frames[top].replacing = replacing
                if !replacing { frames[top].greatestKey = key }
            }
        case .colon:
            guard byte == UInt8(ascii: ":") else { throw malformed("expected \":\"", at: offset) }
            position += 1
            frames[top].expect = .value
        case .firstMember, .value:
            return try readMember(of: top)
        case .separator:
            if byte == UInt8(ascii: ",") {
                position += 1
                frames[top].expect = isArray ? .value : .name
            } else if byte == close {
                position += 1
                try closeFrame()
            } else {
                throw malformed(isArray ? "expected \",\" or \"]\"" : "expected \",\" or \"}\"", at: offset)
            }
        }
        return true
    }

    /// Reads the member name at ``position``, or returns `nil` when it has not all arrived.
    private mutating func readName() throws(CoreTreeError) -> String? {
        var scan = extent ?? JSONValueExtent(kind: .string, start: offset)
        switch buffer.withUnsafeBufferPointer({ scan.scan($0, bytesStart: bufferStart, limit: maxValueBytes) }) {
        case .complete:
            extent = nil
        case .incomplete where atEnd:
            extent = nil
        case .incomplete:
            extent = scan
            return nil
        case .tooLarge:
            extent = nil
            throw CoreTreeError(.invalidKey, "At byte \(offset): a member name longer than \(maxValueBytes) bytes; keys are at most 768 bytes.")
        }
        return try parseName()
    }

    /// Members an object's frame keeps until it closes, read whole: the export format's `.value`
    /// and `.priority`, and the `.sv` of a server value.
    private static let specialNames: Set<String> = [".value", ".priority", ".sv"]

    /// Whether `name` is one of ``specialNames`` where it stands: an update's top-level names
    /// are paths, never special.
    private func isSpecial(_ name: String, inFrame index: Int) -> Bool {
        !(isUpdate && index == 0) && Self.specialNames.contains(name)
    }

    /// Reads the value of the member (or array element) at ``position`` in frame `top`; `false`
    /// when the bytes at hand end inside it.
    private mutating func readMember(of top: Int) throws(CoreTreeError) -> Bool {
        let frame = frames[top]
        let valueStart = offset
        if !frame.isArray && isSpecial(frame.name, inFrame: top) {
            guard case .node(let node)? = try readValue(nesting: frame.nesting, whole: true) else { return false }
            if parsedServerValue || frame.name == ".sv" { frames[top].serverValues = true }
            if frame.name == ".value" {
                frames[top].explicitValue = node
            } else if frame.name == ".sv" {
                frames[top].serverValue = node
            } else if ServerValue.isPlaceholder(node) {
                // A server value as the priority stays a placeholder until a write resolves it.
                frames[top].placeholderPriority = node
            } else {
                frames[top].priority = try priority(of: node, at: valueStart)
            }
            frames[top].expect = .separator
            return true
        }
        // An update member that sets a priority is read whole, like a `.priority` member: it is
        // small, and checked as a priority (a server value included) in readUpdateMember.
        let setsPriority = isUpdate && top == 0 && (frame.name == ".priority" || frame.name.hasSuffix("/.priority"))
        guard let outcome = try readValue(nesting: frame.nesting, whole: setsPriority) else { return false }
        let path = frame.path.child(frame.isArray ? ChildKey(String(frame.index)) : ChildKey(frame.name))
        frames[top].expect = .separator
        frames[top].index += 1
        if isUpdate && top == 0 {
            return try readUpdateMember(outcome, at: path, of: frame, valueStart: valueStart)
        }
        switch outcome {
        case .large(let isArray):
            if frame.replacing {
                items.append(JSONStreamItem(path: path, node: .empty, replaces: true))
                frames[top].data = .unknown
            }
            try openFrame(path: path, nesting: frame.nesting + 1, isArray: isArray, problem: nameProblem(of: frame).map { ($0, frame.nameOffset) })
        case .node(let node) where node.isEmpty:
            if frame.replacing {
                items.append(JSONStreamItem(path: path, node: .empty, replaces: true))
                frames[top].data = .unknown
            }
        case .node(let node):
            if let problem = nameProblem(of: frame) {
                failureByte = frame.nameOffset
                throw problem
            }
            try checked(node, at: path, start: valueStart)
            try emitData(JSONStreamItem(path: path, node: node, replaces: frame.replacing, containsServerValues: parsedServerValue))
            frames[top].data = .some
        }
        return true
    }

    /// Reads a top-level member of an update: its name is a path; its value, `null` included,
    /// comes out as an item of its own, or as an empty item followed by its pieces when large.
    private mutating func readUpdateMember(_ outcome: ValueOutcome, at path: TreePath, of frame: Frame, valueStart: Int) throws(CoreTreeError) -> Bool {
        let target: TreePath
        do {
            target = try TreePath(validating: frame.name)
        } catch {
            failureByte = frame.nameOffset
            throw CoreTreeError(error.code, "At byte \(frame.nameOffset): \(error.message)", underlying: error)
        }
        if target.lastKey?.isPriorityKey == true {
            // It sets the priority there: only what a `.priority` member could hold (fuzz-json
            // found `{".priority": true}` accepted, which the write then took as "remove it").
            switch outcome {
            case .large:
                failureByte = valueStart
                throw CoreTreeError(.invalidPriority, "At byte \(valueStart): a priority must be a number, a string or null, not an object.")
            case .node(let node):
                if !ServerValue.isPlaceholder(node) {
                    do {
                        _ = try priority(of: node, at: valueStart)
                    } catch {
                        failureByte = valueStart
                        throw error
                    }
                }
            }
        }
        switch outcome {
        case .large(let isArray):
            items.append(JSONStreamItem(path: path, node: .empty, replaces: frame.replacing))
            try openFrame(path: path, nesting: frame.nesting + 1, isArray: isArray)
        case .node(let node):
            if !node.isEmpty { try checked(node, at: path, start: valueStart) }
            items.append(JSONStreamItem(path: path, node: node, replaces: frame.replacing, containsServerValues: parsedServerValue))
        }
        frames[0].data = .some
        return true
    }

    /// Why the name of the member `frame` is reading cannot be a key, if it cannot (array
    /// positions always can).
    private func nameProblem(of frame: Frame) -> CoreTreeError? {
        guard !frame.isArray, let problem = Validation.keyProblem(frame.name) else { return nil }
        return CoreTreeError(.invalidKey, "At byte \(frame.nameOffset): invalid key \"\(frame.name)\": it \(problem).")
    }

    /// The priority a `.priority` member gives, as the whole-document parser reads it.
    private func priority(of node: Node, at start: Int) throws(CoreTreeError) -> Priority? {
        switch node.leafValue {
        case .number(let number)?: return .number(number)
        case .string(let string)?: return .string(string)
        case nil where node.isEmpty: return nil
        default: throw CoreTreeError(.invalidPriority, "At byte \(start): a priority must be a number, a string or null, not \(node).")
        }
    }

    /// Ends the innermost frame: emits its `.value` or its priority and tells its parent.
    private mutating func closeFrame() throws(CoreTreeError) {
        let frame = frames.removeLast()
        if frame.problem != nil { framesWithProblems -= 1 }
        var data = frame.data
        let serverValue = frame.serverValue.flatMap { $0.isEmpty ? nil : $0 }
        if frame.explicitValue != nil || serverValue != nil {
            if frame.data == .some || (frame.explicitValue != nil && serverValue != nil) {
                throw frame.explicitValue != nil
                    ? CoreTreeError(
                        .invalidValue,
                        "At byte \(frame.start): an object with \".value\" may not have other children (besides \".priority\").")
                    : CoreTreeError(
                        .invalidKey,
                        "At byte \(frame.start): invalid key \".sv\": a server value ({\".sv\": ...}) may have no other members.")
            }
            var node = frame.explicitValue?.withPriority(frame.priority)
                ?? Node(children: [(key: ChildKey.serverValue, value: serverValue!)], priority: frame.priority)
            if let placeholder = frame.placeholderPriority { node = ServerValue.carrying(node, priority: placeholder) }
            if !node.isEmpty {
                if let problem = frame.problem {
                    failureByte = frame.problemByte
                    throw problem
                }
                try checked(node, at: frame.path, start: frame.start)
                try emitData(JSONStreamItem(path: frame.path, node: node, replaces: frame.data != .none, containsServerValues: frame.serverValues))
            } else if frame.data != .none {
                items.append(JSONStreamItem(path: frame.path, node: node, replaces: true))
            }
            data = node.isEmpty ? .none : .some
        } else if data != .none {
            let path = frame.path.child(.priority)
            if let placeholder = frame.placeholderPriority {
                do {
                    try ServerValue.validatePlaceholder(placeholder, at: path)
                } catch {
                    throw CoreTreeError(error.code, "At byte \(frame.start): \(error.message)", underlying: error)
                }
                items.append(JSONStreamItem(path: path, node: placeholder, replaces: data == .unknown, containsServerValues: true))
            } else if let priority = frame.priority {
                items.append(JSONStreamItem(path: path, node: priority.node, replaces: data == .unknown))
            }
        }
        if frames.isEmpty {
            phase = .afterRoot
        } else {
            frames[frames.count - 1].data = frames[frames.count - 1].data.adding(data)
        }
    }
}
