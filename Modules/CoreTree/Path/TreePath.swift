/// A location in the tree: a sequence of child keys from the root.
///
/// `""`, `"/"`, `"a/b"` and `"/a/b/"` all parse; empty segments are dropped, so the last two name
/// the same location. The wire form is `/a/b`, and `/` for the root.
public struct TreePath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The keys from the root down; empty for the root.
    public let keys: [ChildKey]

    /// The root of the tree.
    public static let root = TreePath(keys: [])

    /// A path from keys, without validation.
    @inlinable
    public init(keys: [ChildKey]) { self.keys = keys }

    /// Parses and validates a path string as a user would give it.
    ///
    /// Each segment must be a valid key (see ``Validation/validateKey(_:)``), except that the first
    /// segment may be `.info` and the last may be `.priority`. The whole path may have at most 32
    /// levels and 768 UTF-8 bytes.
    ///
    /// The initializer is labelled so that it cannot be mistaken for the unvalidated string-literal
    /// form (`let path: TreePath = "a/b"`), which trusts its input.
    ///
    /// - Throws: ``CoreTreeError`` with code `invalidPath`, `pathTooDeep` or `pathTooLong`.
    public init(validating string: String) throws(CoreTreeError) {
        let parsed = TreePath(unchecked: string)
        for (index, key) in parsed.keys.enumerated() {
            if index == 0 && key == .info { continue }
            if index == parsed.keys.count - 1 && key.isPriorityKey { continue }
            if let problem = Validation.keyProblem(key.stringValue) {
                throw CoreTreeError(
                    .invalidPath,
                    "Invalid path \"\(string)\": segment \"\(key.stringValue)\" \(problem).")
            }
        }
        try Validation.validatePathLimits(parsed, context: "Path \"\(string)\"")
        self = parsed
    }

    /// Splits a path string on `/` without validating the segments (for trusted or wire input).
    public init(unchecked string: String) {
        // Split on the "/" byte, not on Characters: a key that starts with a combining mark would
        // otherwise form one grapheme cluster with the "/" before it, and the split would miss it.
        keys = string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
            .map { ChildKey(String(decoding: $0, as: UTF8.self)) }
    }

    /// Whether this is the root.
    @inlinable public var isRoot: Bool { keys.isEmpty }
    /// The number of keys.
    @inlinable public var depth: Int { keys.count }
    /// The first key, or `nil` at the root.
    @inlinable public var firstKey: ChildKey? { keys.first }
    /// The last key, or `nil` at the root.
    @inlinable public var lastKey: ChildKey? { keys.last }

    /// The path without its first key; the root stays the root.
    public var droppingFirst: TreePath { TreePath(keys: Array(keys.dropFirst())) }

    /// The parent location, or `nil` at the root.
    public var parent: TreePath? { keys.isEmpty ? nil : TreePath(keys: Array(keys.dropLast())) }

    /// The location of the child `key` below this one.
    public func child(_ key: ChildKey) -> TreePath { TreePath(keys: keys + [key]) }

    /// The location of `path` below this one.
    public func appending(_ path: TreePath) -> TreePath { TreePath(keys: keys + path.keys) }

    /// Whether `self` is `other` or one of its ancestors.
    public func contains(_ other: TreePath) -> Bool {
        other.keys.count >= keys.count && other.keys.starts(with: keys)
    }

    /// Whether `self` is a strict ancestor of `other`.
    public func isAncestor(of other: TreePath) -> Bool {
        other.keys.count > keys.count && other.keys.starts(with: keys)
    }

    /// Whether `self` is a strict descendant of `other`.
    public func isDescendant(of other: TreePath) -> Bool { other.isAncestor(of: self) }

    /// The path from `ancestor` down to `self`, or `nil` when `ancestor` does not contain `self`.
    public func relative(to ancestor: TreePath) -> TreePath? {
        guard ancestor.contains(self) else { return nil }
        return TreePath(keys: Array(keys.dropFirst(ancestor.keys.count)))
    }

    /// The form used by the wire protocol and in URLs: `/a/b`, or `/` for the root.
    public var wireForm: String {
        keys.isEmpty ? "/" : "/" + keys.map(\.stringValue).joined(separator: "/")
    }

    /// The form without a leading slash used in server pushes: `a/b`, or `""` for the root.
    public var relativeForm: String { keys.map(\.stringValue).joined(separator: "/") }

    /// The number of UTF-8 bytes of the path's keys and the `/` separators between them.
    public var utf8Length: Int {
        keys.reduce(max(0, keys.count - 1)) { $0 + $1.stringValue.utf8.count }
    }

    public var description: String { wireForm }

    /// Orders paths key by key in Firebase key order; an ancestor sorts before its descendants.
    public static func < (lhs: TreePath, rhs: TreePath) -> Bool {
        for (a, b) in zip(lhs.keys, rhs.keys) {
            let order = ChildKey.compare(a, b)
            if order != 0 { return order < 0 }
        }
        return lhs.keys.count < rhs.keys.count
    }
}

extension TreePath: ExpressibleByStringLiteral {
    /// A path from a literal, split on `/` without validation.
    public init(stringLiteral value: String) { self.init(unchecked: value) }
}
