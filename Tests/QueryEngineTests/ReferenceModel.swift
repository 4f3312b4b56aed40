import CoreTree
import QueryEngine
import TestSupport

/// Brute-force orderings and query evaluation, written from the reference text
/// (client-internals.md §5), independent of the engine's `IndexKey` / `IndexedNode` / filters.
enum Reference {
    /// Key order: 32-bit integer keys first (numerically, shorter string first on ties), then the
    /// rest by UTF-16 code units.
    static func compareKeys(_ a: String, _ b: String) -> Int {
        let ia = integerKey(a), ib = integerKey(b)
        switch (ia, ib) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            return a.utf8.count == b.utf8.count ? 0 : (a.utf8.count < b.utf8.count ? -1 : 1)
        case (_?, nil): return -1
        case (nil, _?): return 1
        case (nil, nil): return compareUTF16(a, b)
        }
    }

    static func compareUTF16(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf16), y = Array(b.utf16)
        for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
        return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
    }

    static func integerKey(_ s: String) -> Int64? {
        let body = s.hasPrefix("-") ? String(s.dropFirst()) : s
        guard !body.isEmpty, body.count <= 10, body.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        if body.hasPrefix("0") && (body.count > 1 || s.hasPrefix("-")) { return nil }
        guard let v = Int64(s), v >= Int64(Int32.min), v <= Int64(Int32.max) else { return nil }
        return v
    }

    /// Value order: null < false < true < numbers < strings < objects (all objects equal).
    static func compareValues(_ a: Node, _ b: Node) -> Int {
        func rank(_ n: Node) -> Int {
            if n.isEmpty { return 0 }
            switch n.leafValue {
            case .bool(false)?: return 1
            case .bool(true)?: return 2
            case .number?: return 3
            case .string?: return 4
            case nil: return 5
            }
        }
        let ra = rank(a), rb = rank(b)
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a.leafValue, b.leafValue) {
        case let (.number(x)?, .number(y)?): return x < y ? -1 : (x > y ? 1 : 0)
        case let (.string(x)?, .string(y)?): return compareUTF16(x, y)
        default: return 0
        }
    }

    /// The value a child is ordered by (priority order: none < numbers < strings, like value order
    /// restricted to null / numbers / strings).
    static func orderValue(_ node: Node, _ index: QueryIndex) -> Node {
        switch index {
        case .key: return .empty
        case .value: return node
        case .child(let path): return node.child(at: path)
        case .priority:
            switch node.priority {
            case nil: return .empty
            case .number(let d)?: return Node(.number(d))
            case .string(let s)?: return Node(.string(s))
            }
        }
    }

    /// Compares two children in `index` order, ties by key.
    static func compareChildren(_ a: (String, Node), _ b: (String, Node), _ index: QueryIndex) -> Int {
        if case .key = index { return compareKeys(a.0, b.0) }
        let order = compareValues(orderValue(a.1, index), orderValue(b.1, index))
        return order != 0 ? order : compareKeys(a.0, b.0)
    }

    /// Whether a child lies within the query's start and end bounds.
    static func inRange(_ key: String, _ node: Node, _ params: QueryParams) -> Bool {
        func side(_ bound: QueryParams.Bound, isStart: Bool) -> Bool {
            // c: how the child compares to the bound (negative: child before the bound).
            let c: Int
            if case .key = params.index {
                guard case .string(let boundKey)? = bound.value.leafValue else { return true }
                c = compareKeys(key, boundKey)
            } else {
                let v = compareValues(orderValue(node, params.index), bound.value)
                if v != 0 {
                    c = v
                } else if let name = bound.name {
                    c = compareKeys(key, name.stringValue)
                } else {
                    // Same value, no key: startAt / endAt include it, startAfter / endBefore exclude it.
                    return bound.inclusive
                }
            }
            if isStart { return bound.inclusive ? c >= 0 : c > 0 }
            return bound.inclusive ? c <= 0 : c < 0
        }
        if let start = params.start, !side(start, isStart: true) { return false }
        if let end = params.end, !side(end, isStart: false) { return false }
        return true
    }

    /// The children the query selects from `data`, in query order.
    static func evaluate(_ data: Node, _ params: QueryParams) -> [(String, Node)] {
        guard !data.isLeaf else { return [] }
        var children = data.children.map { ($0.key.stringValue, $0.value) }
        children.sort { compareChildren($0, $1, params.index) < 0 }
        children = children.filter { inRange($0.0, $0.1, params) }
        if let limit = params.limit, children.count > limit {
            children = params.isViewFromLeft ? Array(children.prefix(limit)) : Array(children.suffix(limit))
        }
        return children
    }

    /// The selected children as a node (the data a `value` event of the query carries, ignoring the
    /// location's own priority).
    static func evaluateNode(_ data: Node, _ params: QueryParams) -> Node {
        if params.loadsAllData { return data }
        if data.isLeaf { return .empty }
        return Node(children: evaluate(data, params).map { (key: ChildKey($0.0), value: $0.1) })
    }
}
