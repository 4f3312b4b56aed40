import Foundation

extension Node {
    /// The node as Foundation values, the form `DataSnapshot.value` hands to users.
    ///
    /// Leaves become `Bool`, `NSNumber` (integral values within ±2^53 as integers, so `as? Int`
    /// works; every number also casts to `Double`) or `String`; children nodes become
    /// `[String: Any]`, or `[Any?]` with `nil` holes when they are array-like (see ``isArrayLike``)
    /// and `exportFormat` is off. The empty node becomes `NSNull`. With `exportFormat`, priorities
    /// appear as `.priority` (leaves with priority as `[".value": v, ".priority": p]`) and no arrays
    /// are made.
    public func foundationValue(exportFormat: Bool = false) -> Any {
        let priority = exportFormat ? self.priority : nil
        if let leaf = leafValue {
            let value = Node.foundationLeaf(leaf)
            guard let priority else { return value }
            return [".value": value, ".priority": Node.foundationPriority(priority)] as [String: Any]
        }
        if isEmpty { return NSNull() }
        if !exportFormat && isArrayLike {
            var array = [Any?](repeating: nil, count: children.last!.key.intValue! + 1)
            for (key, child) in children { array[key.intValue!] = child.foundationValue() }
            return array
        }
        var dictionary = [String: Any](minimumCapacity: childCount + 1)
        for (key, child) in children {
            dictionary[key.stringValue] = child.foundationValue(exportFormat: exportFormat)
        }
        if let priority { dictionary[".priority"] = Node.foundationPriority(priority) }
        return dictionary
    }

    static func foundationLeaf(_ leaf: LeafValue) -> Any {
        switch leaf {
        case .bool(let value): value
        case .number(let number):
            if let integer = LeafValue.exactInteger(number) { NSNumber(value: integer) } else { NSNumber(value: number) }
        case .string(let string): string
        }
    }

    /// The priority in Foundation form (`NSNumber` or `String`, as ``foundationValue(exportFormat:)``
    /// writes it), `nil` when there is none.
    public var foundationPriority: Any? { priority.map(Node.foundationPriority) }

    static func foundationPriority(_ priority: Priority) -> Any {
        switch priority {
        case .number(let number): foundationLeaf(.number(number))
        case .string(let string): string
        }
    }

    /// Converts Foundation values into a node, reading the export format (`.value`, `.priority`,
    /// `.sv`) as the JSON parser does.
    ///
    /// Accepts `nil` and `NSNull` (empty), `Bool`, `NSNumber`, any Swift integer or floating-point
    /// number, `String`, `[String: Any]` / `NSDictionary`, `[Any]` / `NSArray` (elements become
    /// children `"0"`, `"1"`, ...; `nil` elements are holes), optionals of these, and ``Node``.
    ///
    /// - Throws: ``CoreTreeError`` with code `unsupportedType` for other types, `invalidValue` for
    ///   NaN or infinite numbers, `invalidPriority` for a priority that is not a number or string.
    public init(foundationValue value: Any?) throws(CoreTreeError) {
        self = try Node.convert(value, depth: 0)
    }

    private static func convert(_ value: Any?, depth: Int) throws(CoreTreeError) -> Node {
        guard let value else { return .empty }
        if let optional = value as? any OptionalBox { return try convert(optional.wrappedAny, depth: depth) }
        if depth > JSONParser.maxNesting {
            throw CoreTreeError(.invalidValue, "Value nests deeper than \(JSONParser.maxNesting) levels, or contains a cycle.")
        }
        if value is NSNull { return .empty }
        if let node = value as? Node { return node }
        if let leaf = try leafValue(of: value) { return Node(leaf) }
        if let dictionary = value as? [String: Any] {
            var entries: [(key: ChildKey, value: Node)] = []
            entries.reserveCapacity(dictionary.count)
            var explicitValue: Node?
            var priority: Priority?
            var placeholderPriority: Node?
            for (key, element) in dictionary {
                switch key {
                case ".value": explicitValue = try convert(element, depth: depth + 1)
                case ".priority":
                    let converted = try convert(element, depth: depth + 1)
                    if ServerValue.isPlaceholder(converted) { placeholderPriority = converted } else { priority = try convertPriority(element) }
                default:
                    let child = try convert(element, depth: depth + 1)
                    if !child.isEmpty { entries.append((ChildKey(key), child)) }
                }
            }
            if let explicitValue {
                if !entries.isEmpty {
                    throw CoreTreeError(.invalidValue, "A value with \".value\" may not have other children (besides \".priority\").")
                }
                let node = explicitValue.withPriority(priority)
                return placeholderPriority.map { ServerValue.carrying(node, priority: $0) } ?? node
            }
            let node = Node(nonEmptyChildren: SortedMap(entries), priority: priority)
            return placeholderPriority.map { ServerValue.carrying(node, priority: $0) } ?? node
        }
        if let array = value as? [Any] {
            var entries: [(key: ChildKey, value: Node)] = []
            entries.reserveCapacity(array.count)
            for (position, element) in array.enumerated() {
                let child = try convert(element, depth: depth + 1)
                if !child.isEmpty { entries.append((ChildKey(String(position)), child)) }
            }
            return Node(nonEmptyChildren: SortedMap(sortedUniqueElements: entries), priority: nil)
        }
        throw CoreTreeError(
            .unsupportedType,
            "Cannot store a value of type \(type(of: value)); use Bool, a number, String, [String: Any], [Any] or nil.")
    }

    private static func leafValue(of value: Any) throws(CoreTreeError) -> LeafValue? {
        if type(of: value) == Bool.self { return .bool(value as! Bool) }
        if let string = value as? String { return .string(string) }
        let number: Double
        if type(of: value) is NSNumber.Type, let object = value as? NSNumber {
            // NSNumber(value: true) is the boolean class, whose type encoding is "c".
            if String(cString: object.objCType) == "c" { return .bool(object.boolValue) }
            number = object.doubleValue
        } else if let integer = value as? any BinaryInteger {
            number = Double(integer)
        } else if let floating = value as? any BinaryFloatingPoint {
            number = Double(floating)
        } else {
            return nil
        }
        guard number.isFinite else {
            throw CoreTreeError(.invalidValue, "Cannot store \(number); only finite numbers can be stored.")
        }
        return .number(number)
    }

    private static func convertPriority(_ value: Any?) throws(CoreTreeError) -> Priority? {
        let node = try convert(value, depth: 0)
        switch node.leafValue {
        case .number(let number)?: return .number(number)
        case .string(let string)?: return .string(string)
        case nil where node.isEmpty: return nil
        default:
            throw CoreTreeError(.invalidPriority, "A priority must be a number, a string or nil, not \(node).")
        }
    }
}

/// Lets a value typed `Any` that holds an `Optional` be unwrapped whatever its wrapped type.
private protocol OptionalBox {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalBox {
    fileprivate var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
}
