/// The limits and checks the Firebase Realtime Database applies to keys, paths and values.
///
/// Each check throws a ``CoreTreeError`` whose message names what was wrong and the rule broken.
public enum Validation {
    /// The deepest a path may be, counting the levels of any data written below it.
    public static let maxPathDepth = 32
    /// The longest a path may be in UTF-8 bytes, separators included, with data below it.
    public static let maxPathBytes = 768
    /// The largest string value in UTF-8 bytes (10 MB).
    public static let maxStringBytes = 10 * 1024 * 1024

    /// Why `key` is not a valid key, or `nil` when it is.
    static func keyProblem(_ key: String) -> String? {
        if key.isEmpty { return "is empty" }
        // Every character refused is ASCII, and no byte of a longer UTF-8 sequence is: the bytes
        // say it, without decoding the key's scalars (this runs for every key of every write).
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "."), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"):
                return "contains \"\(Unicode.Scalar(byte))\"; keys may not contain . # $ [ ] or /"
            case 0x00...0x1F, 0x7F:
                return "contains the control character U+\(String(byte, radix: 16, uppercase: true))"
            default:
                continue
            }
        }
        return nil
    }

    /// Checks that `key` is non-empty and has none of `.` `#` `$` `[` `]` `/` or ASCII controls.
    ///
    /// - Throws: ``CoreTreeError`` with code `invalidKey`.
    public static func validateKey(_ key: String) throws(CoreTreeError) {
        if let problem = keyProblem(key) {
            throw CoreTreeError(.invalidKey, "Invalid key \"\(key)\": it \(problem).")
        }
    }

    /// Checks a path against the depth and length limits.
    ///
    /// - Throws: ``CoreTreeError`` with code `pathTooDeep` or `pathTooLong`.
    public static func validatePathLimits(_ path: TreePath, context: String) throws(CoreTreeError) {
        if path.depth > maxPathDepth {
            throw CoreTreeError(
                .pathTooDeep, "\(context) has \(path.depth) levels; at most \(maxPathDepth) are allowed.")
        }
        if path.utf8Length > maxPathBytes {
            throw CoreTreeError(
                .pathTooLong,
                "\(context) is \(path.utf8Length) bytes long; at most \(maxPathBytes) UTF-8 bytes are allowed.")
        }
    }

    /// Checks a multi-path update's paths as ``validateUpdate(_:at:)`` does (each within the
    /// limits, none empty, none inside another), but not the data written there: for an update
    /// whose data a reader already checked where it goes
    /// (``JSONStreamReader/update(subtreeBytes:maxValueBytes:location:)``).
    ///
    /// - Throws: ``CoreTreeError`` naming the first offending path.
    public static func validateUpdatePaths(_ paths: [TreePath], at path: TreePath) throws(CoreTreeError) {
        try validateUpdate(paths.map { (path: $0, node: Node.empty) }, at: path)
    }

    /// Checks data about to be written at `path`: every key valid, the full path of every value
    /// within 32 levels and 768 bytes, strings within 10 MB, numbers finite, server values well formed.
    ///
    /// - Throws: ``CoreTreeError`` naming the first offending location.
    public static func validateWrite(_ node: Node, at path: TreePath) throws(CoreTreeError) {
        try validatePathLimits(path, context: "Path \"\(path.wireForm)\"")
        if path.lastKey?.isPriorityKey == true {
            try validatePriorityWrite(node, at: path)
        }
        var keys = path.keys
        try validateData(node, path: &keys, bytes: path.utf8Length)
    }

    /// A write to a `.priority` path sets the priority of its parent: only a number, a string, a
    /// server value or nothing (which removes it) can be one. Anything else was taken as "no
    /// priority" and silently removed the one there (found by fuzz-json).
    private static func validatePriorityWrite(_ node: Node, at path: TreePath) throws(CoreTreeError) {
        if node.isEmpty || ServerValue.isPlaceholder(node) { return }
        switch node.leafValue {
        case .number?, .string?:
            if node.priority == nil { return }
        default:
            break
        }
        throw CoreTreeError(
            .invalidPriority, "A priority must be a number, a string or null, not \(node.jsonString(format: .export)) (at \"\(path.wireForm)\").")
    }

    /// Checks a multi-path update: each target valid, none an ancestor of another.
    ///
    /// - Parameters:
    ///   - updates: values by path relative to `path`.
    ///   - path: the location the update is applied at.
    /// - Throws: ``CoreTreeError`` naming the first offending path.
    public static func validateUpdate(_ updates: [(path: TreePath, node: Node)], at path: TreePath) throws(CoreTreeError) {
        let sorted = updates.sorted { $0.path < $1.path }
        for (index, update) in sorted.enumerated() {
            if update.path.isRoot {
                throw CoreTreeError(.invalidPath, "An update may not contain an empty path; use set to replace the location.")
            }
            try validateWrite(update.node, at: path.appending(update.path))
            if index > 0, sorted[index - 1].path.contains(update.path) {
                throw CoreTreeError(
                    .invalidPath,
                    "Update path \"\(sorted[index - 1].path.wireForm)\" is an ancestor of \"\(update.path.wireForm)\"; paths in one update may not overlap.")
            }
        }
    }

    /// Checks `node` at `path` (whose keys take `bytes` bytes); `path` is extended and restored
    /// on the way down, so the walk allocates no path per child.
    private static func validateData(_ node: Node, path: inout [ChildKey], bytes: Int) throws(CoreTreeError) {
        switch node.leafValue {
        case .string(let string)?:
            if string.utf8.count > maxStringBytes {
                throw CoreTreeError(
                    .valueTooLarge,
                    "String at \"\(TreePath(keys: path).wireForm)\" is \(string.utf8.count) bytes; at most \(maxStringBytes) (10 MB) are allowed.")
            }
        case .number(let number)?:
            if !number.isFinite {
                throw CoreTreeError(.invalidValue, "Number at \"\(TreePath(keys: path).wireForm)\" is \(number); only finite numbers can be stored.")
            }
        default:
            break
        }
        if case .number(let number)? = node.priority, !number.isFinite {
            throw CoreTreeError(.invalidPriority, "Priority at \"\(TreePath(keys: path).wireForm)\" is \(number); only finite numbers can be priorities.")
        }
        if node.isLeaf || node.isEmpty { return }
        if ServerValue.isPlaceholder(node) {
            try ServerValue.validatePlaceholder(node, at: TreePath(keys: path))
            return
        }
        if let placeholder = ServerValue.placeholderPriority(of: node) {
            try ServerValue.validatePlaceholder(placeholder, at: TreePath(keys: path + [ChildKey.priority]))
            try validateData(ServerValue.body(ofCarrier: node), path: &path, bytes: bytes)
            return
        }
        for (key, child) in node.children {
            if let problem = keyProblem(key.stringValue) {
                throw CoreTreeError(.invalidKey, "Invalid key \"\(key.stringValue)\" at \"\(TreePath(keys: path).wireForm)\": it \(problem).")
            }
            let childBytes = bytes + key.stringValue.utf8.count + (path.isEmpty ? 0 : 1)
            path.append(key)
            defer { path.removeLast() }
            if path.count > maxPathDepth {
                throw CoreTreeError(
                    .pathTooDeep,
                    "Data at \"\(TreePath(keys: path).wireForm)\" is \(path.count) levels deep; at most \(maxPathDepth) are allowed.")
            }
            if childBytes > maxPathBytes {
                throw CoreTreeError(
                    .pathTooLong,
                    "Path \"\(TreePath(keys: path).wireForm)\" is \(childBytes) bytes long; at most \(maxPathBytes) UTF-8 bytes are allowed.")
            }
            try validateData(child, path: &path, bytes: childBytes)
        }
    }
}
