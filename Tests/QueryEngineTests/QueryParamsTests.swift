import CoreTree
import TestSupport
@testable import QueryEngine
import Testing

private func num(_ d: Double) -> Node { Node(.number(d)) }
private func str(_ s: String) -> Node { Node(.string(s)) }
private func bool(_ b: Bool) -> Node { Node(.bool(b)) }
private let object = Node(children: [(key: ChildKey("a"), value: Node(.number(1)))])

/// Runs `body` and returns the code of the ``QueryError`` it throws (nil when it does not throw).
private func errorCode(_ body: () throws -> QueryParams) -> QueryError.Code? {
    do {
        _ = try body()
        return nil
    } catch {
        return (error as? QueryError)?.code
    }
}

@Suite("QueryParams")
struct QueryParamsTests {
    let p = QueryParams()

    // MARK: - Validation

    @Test("a query built from another leaves it unchanged (the parameters are shared until changed)")
    func derivedQueriesDoNotAlias() throws {
        let ordered = try QueryParams().orderedBy(.child("score"))
        let limited = try ordered.limitedToLast(3)
        let bounded = try ordered.startingAt(Node(.number(5)), name: "k")
        #expect(ordered.limit == nil && ordered.start == nil)
        #expect(limited.limit == 3 && limited.start == nil)
        #expect(bounded.start?.value == Node(.number(5)) && bounded.limit == nil)
        #expect(limited.index == .child("score") && bounded.index == .child("score"))
        #expect(ordered != limited && limited != bounded)
        #expect(try ordered.limitedToLast(3) == limited)
        #expect(Set([limited, try ordered.limitedToLast(3)]).count == 1)
    }

    @Test("two orderBy calls are rejected")
    func twoOrderBys() {
        for first in [QueryIndex.key, .value, .priority, .child("a")] {
            for second in [QueryIndex.key, .value, .priority, .child("b")] {
                #expect(errorCode { try p.orderedBy(first).orderedBy(second) } == .alreadySet)
            }
        }
    }

    @Test("two limits are rejected")
    func twoLimits() {
        #expect(errorCode { try p.limitedToFirst(1).limitedToFirst(2) } == .alreadySet)
        #expect(errorCode { try p.limitedToFirst(1).limitedToLast(2) } == .alreadySet)
        #expect(errorCode { try p.limitedToLast(1).limitedToFirst(2) } == .alreadySet)
        #expect(errorCode { try p.limitedToLast(1).limitedToLast(2) } == .alreadySet)
    }

    @Test("a limit of zero or less is rejected", arguments: [0, -1, -100, Int.min])
    func nonPositiveLimit(_ limit: Int) {
        #expect(errorCode { try p.limitedToFirst(limit) } == .invalidLimit)
        #expect(errorCode { try p.limitedToLast(limit) } == .invalidLimit)
        #expect(errorCode { try p.limitedToFirst(1) } == nil)
    }

    @Test("two start points or two end points are rejected")
    func twoStartsOrEnds() {
        #expect(errorCode { try p.startingAt(num(1)).startingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.startingAt(num(1)).startingAfter(num(2)) } == .alreadySet)
        #expect(errorCode { try p.startingAfter(num(1)).startingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.endingAt(num(1)).endingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.endingAt(num(1)).endingBefore(num(2)) } == .alreadySet)
        #expect(errorCode { try p.endingBefore(num(1)).endingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.equalTo(num(1)).startingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.equalTo(num(1)).endingAt(num(2)) } == .alreadySet)
        #expect(errorCode { try p.startingAt(num(1)).endingAt(num(2)) } == nil)
    }

    @Test("equalTo after startAt or endAt is rejected")
    func equalToAfterBound() {
        #expect(errorCode { try p.startingAt(num(1)).equalTo(num(2)) } == .alreadySet)
        #expect(errorCode { try p.startingAfter(num(1)).equalTo(num(2)) } == .alreadySet)
        #expect(errorCode { try p.endingAt(num(1)).equalTo(num(2)) } == .alreadySet)
        #expect(errorCode { try p.endingBefore(num(1)).equalTo(num(2)) } == .alreadySet)
        #expect(errorCode { try p.equalTo(num(1)).equalTo(num(2)) } == .alreadySet)
    }

    @Test("orderByKey needs string bounds without a name, in either call order")
    func orderByKeyBounds() {
        for bad in [num(1), bool(true), Node.empty, object] {
            #expect(errorCode { try p.orderedBy(.key).startingAt(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.key).endingAt(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.key).equalTo(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.key).startingAfter(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.key).endingBefore(bad) } == .invalidBound)
        }
        #expect(errorCode { try p.startingAt(num(1)).orderedBy(.key) } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.key).startingAt(str("a"), name: "b") } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.key).endingAt(str("a"), name: "b") } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.key).equalTo(str("a"), name: "b") } == .invalidBound)
        #expect(errorCode { try p.startingAt(str("a"), name: "b").orderedBy(.key) } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.key).startingAt(str("a")).endingAt(str("z")) } == nil)
    }

    @Test("orderByPriority rejects boolean (and object) bounds")
    func orderByPriorityBounds() {
        for bad in [bool(true), bool(false), object] {
            #expect(errorCode { try p.orderedBy(.priority).startingAt(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.priority).endingAt(bad) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(.priority).equalTo(bad) } == .invalidBound)
            // The default order is the priority order, with or without orderByPriority.
            #expect(errorCode { try p.startingAt(bad) } == .invalidBound)
            #expect(errorCode { try p.endingBefore(bad) } == .invalidBound)
        }
        // As in the JS and Android clients, the bound is checked against the order in force when it
        // is set: before any orderBy that is the priority order.
        #expect(errorCode { try p.startingAt(bool(true)).orderedBy(.value) } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.value).startingAt(bool(true)) } == nil)
        for good in [num(1), str("x"), Node.empty] {
            #expect(errorCode { try p.orderedBy(.priority).startingAt(good).endingAt(good, name: "k") } == nil)
        }
    }

    @Test("orderByValue and orderByChild reject object bounds")
    func objectBounds() {
        for index in [QueryIndex.value, .child("a/b")] {
            #expect(errorCode { try p.orderedBy(index).startingAt(object) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(index).startingAfter(object) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(index).endingAt(object) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(index).endingBefore(object) } == .invalidBound)
            #expect(errorCode { try p.orderedBy(index).equalTo(object) } == .invalidBound)
            for good in [num(1), str("x"), bool(false), Node.empty] {
                #expect(errorCode { try p.orderedBy(index).startingAt(good, name: "n").endingAt(good) } == nil)
            }
        }
    }

    @Test("orderByChild rejects .key, .value, .priority and the empty path")
    func orderByChildPaths() {
        for path in [".key", ".value", ".priority", "a/.priority", ".key/b"] {
            #expect(errorCode { try p.orderedBy(.child(TreePath(unchecked: path))) } == .invalidBound, "\(path)")
        }
        #expect(errorCode { try p.orderedBy(.child(.root)) } == .invalidBound)
        #expect(errorCode { try p.orderedBy(.child("a/b")) } == nil)
    }

    // MARK: - Derived properties

    @Test("loadsAllData, isDefault and forListening")
    func derived() throws {
        #expect(p.loadsAllData && p.isDefault && p.forListening == p)
        let byChild = try p.orderedBy(.child("h"))
        #expect(byChild.loadsAllData && !byChild.isDefault)
        #expect(byChild.forListening == .default)
        let byPriority = try p.orderedBy(.priority)
        #expect(byPriority.loadsAllData && byPriority.isDefault && byPriority.identifier == "default")
        for limited in [try p.limitedToFirst(1), try p.startingAt(num(1)), try p.orderedBy(.key).endingAt(str("a"))] {
            #expect(!limited.loadsAllData && !limited.isDefault)
            #expect(limited.forListening == limited)
        }
        #expect(QuerySpec(path: "a", params: byChild).forListening == .default(at: "a"))
        // Naming the default order explicitly makes no different query.
        #expect(try p.orderedBy(.priority).limitedToLast(2) == p.limitedToLast(2))
        #expect(try Set([p.orderedBy(.priority).startingAt(num(1)), p.startingAt(num(1))]).count == 1)
    }

    @Test("isViewFromLeft: explicit limit direction wins, else left only when a start is set")
    func viewFrom() throws {
        #expect(!p.isViewFromLeft)
        #expect(try p.startingAt(num(1)).isViewFromLeft)
        #expect(try !p.endingAt(num(1)).isViewFromLeft)
        #expect(try p.startingAt(num(1)).endingAt(num(2)).isViewFromLeft)
        #expect(try p.limitedToFirst(2).isViewFromLeft)
        #expect(try !p.limitedToLast(2).isViewFromLeft)
        #expect(try !p.startingAt(num(1)).limitedToLast(2).isViewFromLeft)
        #expect(try p.endingAt(num(1)).limitedToFirst(2).isViewFromLeft)
    }

    // MARK: - Wire form

    /// The identifier is the export JSON with keys sorted by UTF-16 code units, so `ein` comes
    /// before `ep` and `sin` before `sn` before `sp`.
    @Test("wire forms follow protocol.md section 7", arguments: [
        ("orderByChild(height).startAt(3).endAt(5).limitToLast(2)", #"{"ein":true,"ep":5,"i":"height","l":2,"sin":true,"sp":3,"vf":"r"}"#),
        ("limitToFirst(1)", #"{"l":1,"vf":"l"}"#),
        ("orderByKey.startAt(a)", #"{"i":".key","sin":true,"sp":"a"}"#),
        ("orderByValue.startAfter(3)", #"{"i":".value","sin":false,"sn":"[MAX_NAME]","sp":3}"#),
        ("orderByValue.endBefore(3)", #"{"ein":false,"en":"[MIN_NAME]","ep":3,"i":".value"}"#),
        ("startAt(null,k).limitToFirst(3)", #"{"l":3,"sin":true,"sn":"k","vf":"l"}"#),
        ("orderByChild(a/b).equalTo(true,x)", #"{"ein":true,"en":"x","ep":true,"i":"a/b","sin":true,"sn":"x","sp":true}"#),
        ("orderByChild(n).startAfter(2,k)", #"{"i":"n","sin":false,"sn":"k","sp":2}"#),
    ])
    func wireForms(_ name: String, _ expected: String) throws {
        let params: QueryParams = try {
            switch name {
            case "orderByChild(height).startAt(3).endAt(5).limitToLast(2)":
                return try p.orderedBy(.child("height")).startingAt(num(3)).endingAt(num(5)).limitedToLast(2)
            case "limitToFirst(1)": return try p.limitedToFirst(1)
            case "orderByKey.startAt(a)": return try p.orderedBy(.key).startingAt(str("a"))
            case "orderByValue.startAfter(3)": return try p.orderedBy(.value).startingAfter(num(3))
            case "orderByValue.endBefore(3)": return try p.orderedBy(.value).endingBefore(num(3))
            case "startAt(null,k).limitToFirst(3)": return try p.startingAt(.empty, name: "k").limitedToFirst(3)
            case "orderByChild(a/b).equalTo(true,x)": return try p.orderedBy(.child("a/b")).equalTo(bool(true), name: "x")
            default: return try p.orderedBy(.child("n")).startingAfter(num(2), name: "k")
            }
        }()
        #expect(params.wireObject.jsonString(format: .export) == expected)
        #expect(params.identifier == expected)
        #expect(try QueryParams(wireObject: params.wireObject) == params)
    }

    @Test("the default query's identifier is \"default\" and its wire object is empty")
    func defaultIdentifier() throws {
        #expect(p.identifier == "default")
        #expect(p.wireObject.isEmpty)
        #expect(try QueryParams(wireObject: .empty) == p)
        #expect(try p.orderedBy(.key).identifier == #"{"i":".key"}"#)
    }

    /// A random valid query: random order, bounds of suitable types, maybe a limit.
    static func randomParams(_ rng: inout SplitMix64, keys: [String] = ["a", "b", "c", "1", "2"]) -> QueryParams {
        var p = QueryParams()
        let orderChoice = Int.random(in: 0..<6, using: &rng)
        let index: QueryIndex? = [nil, .priority, .key, .value, .child("c"), .child("c/a")][orderChoice]
        if let index { p = try! p.orderedBy(index) }
        func value() -> Node {
            switch index ?? .priority {
            case .key: return Node(.string(keys.randomElement(using: &rng)!))
            case .priority:
                return [Node.empty, Node(.number(Double(Int.random(in: 0...3, using: &rng)))), Node(.string(["a", "b"].randomElement(using: &rng)!))]
                    .randomElement(using: &rng)!
            default:
                return [Node.empty, Node(.bool(Bool.random(using: &rng))), Node(.number(Double(Int.random(in: 0...3, using: &rng)))),
                        Node(.string(["a", "b"].randomElement(using: &rng)!))].randomElement(using: &rng)!
            }
        }
        func name() -> ChildKey? {
            if case .key = index ?? .priority { return nil }
            return Bool.random(using: &rng) ? nil : ChildKey(keys.randomElement(using: &rng)!)
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: p = try! p.equalTo(value(), name: name())
        case 1: break
        default:
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: p = try! p.startingAt(value(), name: name())
            case 1: p = try! p.startingAfter(value(), name: name())
            default: break
            }
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: p = try! p.endingAt(value(), name: name())
            case 1: p = try! p.endingBefore(value(), name: name())
            default: break
            }
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: p = try! p.limitedToFirst(Int.random(in: 1...3, using: &rng))
        case 1: p = try! p.limitedToLast(Int.random(in: 1...3, using: &rng))
        default: break
        }
        return p
    }

    @Test("wire round trip for random valid queries")
    func roundTrip() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let params = QueryParamsTests.randomParams(&rng)
            let parsed = try QueryParams(wireObject: params.wireObject)
            #expect(parsed == params, "\(params)")
            #expect(parsed.identifier == params.identifier)
            #expect(parsed.isViewFromLeft == params.isViewFromLeft)
            // Re-encoding from the JSON text gives the same query too.
            let text = try Node(jsonString: params.wireObject.jsonString(format: .export))
            #expect(try QueryParams(wireObject: text) == params, "\(params)")
        }
    }

    /// Positions for checking which children a query selects: every combination of a few values
    /// and keys, under the query's index.
    static func samplePositions(_ index: QueryIndex) -> [(String, Node)] {
        let keys = ["1", "2", "a", "b", "c"]
        let values: [Node] = [.empty, Node(.bool(false)), Node(.bool(true)), Node(.number(1)), Node(.number(3)),
                              Node(.number(4)), Node(.string("a")), Node(.string("b"))]
        var result: [(String, Node)] = []
        for key in keys {
            for value in values {
                switch index {
                case .key: result.append((key, Node(.number(1))))
                case .value: result.append((key, value.isEmpty ? Node(children: [(key: ChildKey("z"), value: Node(.number(1)))]) : value))
                case .child(let path): result.append((key, Node.empty.updatingChild(at: path, to: value).updatingChild(at: "z", to: Node(.number(0)))))
                case .priority:
                    if case .bool? = value.leafValue { continue }
                    let priority: Priority? = switch value.leafValue {
                    case .number(let d)?: .number(d)
                    case .string(let s)?: .string(s)
                    default: nil
                    }
                    result.append((key, Node(.number(0), priority: priority)))
                }
            }
        }
        return result
    }

    @Test("startAfter emulations of the Android and iOS clients select the same children as startAfter(3)")
    func otherClientsStartAfter() throws {
        for index in [QueryIndex.priority, .value, .child("h")] {
            let startAfter = try p.orderedBy(index).startingAfter(num(3))
            let indexName = index.wireName.map { #","i":"\#($0)""# } ?? ""
            for form in [#"{"sp":3,"sn":"[MAX_NAME]"\#(indexName)}"#, #"{"sp":3,"sn":"[MAX_KEY]"\#(indexName)}"#,
                         #"{"sp":3,"sn":"[MAX_NAME]","sin":false\#(indexName)}"#] {
                let parsed = try QueryParams(wireObject: Node(jsonString: form))
                #expect(parsed.index == index)
                for (key, node) in QueryParamsTests.samplePositions(index) {
                    let position = index.key(name: ChildKey(key), node: node)
                    #expect(parsed.contains(position) == startAfter.contains(position), "\(form) \(key) \(node)")
                    #expect(parsed.contains(position) == Reference.inRange(key, node, startAfter))
                }
            }
        }
        let endBefore = try p.endingBefore(num(3))
        let parsed = try QueryParams(wireObject: Node(jsonString: #"{"ep":3,"en":"[MIN_NAME]"}"#))
        #expect(parsed.index == .priority && parsed.end?.value == num(3))
        for (key, node) in QueryParamsTests.samplePositions(.priority) {
            let position = QueryIndex.priority.key(name: ChildKey(key), node: node)
            #expect(parsed.contains(position) == Reference.inRange(key, node, endBefore), "\(key) \(node)")
        }
    }

    @Test("invalid wire forms throw invalidWireForm", arguments: [
        #"{"l":-1}"#, #"{"l":0}"#, #"{"l":1.5}"#, #"{"l":"2"}"#, #"{"l":2,"vf":"x"}"#, #"{"i":5}"#,
        #"{"sp":1,"sin":"yes"}"#, #"{"ep":1,"en":7}"#,
    ])
    func invalidWireForms(_ json: String) throws {
        let node = try Node(jsonString: json)
        #expect(throws: QueryError.self) { try QueryParams(wireObject: node) }
        do {
            _ = try QueryParams(wireObject: node)
        } catch {
            #expect(error.code == .invalidWireForm)
        }
    }

    @Test("contains agrees with a brute-force bounds check for random queries")
    func containsBruteForce() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<1500 {
            let params = QueryParamsTests.randomParams(&rng)
            for (key, node) in QueryParamsTests.samplePositions(params.index) {
                let position = params.index.key(name: ChildKey(key), node: node)
                #expect(params.contains(position) == Reference.inRange(key, node, params), "\(params) \(key) \(node)")
            }
        }
    }
}
