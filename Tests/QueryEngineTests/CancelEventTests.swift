import CoreTree
import QueryEngine
import Testing

/// A registration that wants every event.
final class TestRegistration: EventRegistration {
    let id: String
    init(_ id: String) { self.id = id }
    func responds(to type: EventType) -> Bool { true }
    var wantsCancelEvents: Bool { true }
}

/// A listen provider that logs starts and stops and keeps each listen's `onComplete`.
final class CapturingListenProvider: ListenProvider {
    var log: [String] = []
    var completions: [String: (ListenOutcome) -> [SyncEvent]] = [:]

    static func key(_ query: QuerySpec) -> String { "\(query.path.wireForm)|\(query.identifier)" }

    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]) -> [SyncEvent] {
        let key = CapturingListenProvider.key(query)
        log.append("start \(key)\(tag.map { " tag \($0)" } ?? "")")
        completions[key] = onComplete
        return []
    }

    func stopListening(_ query: QuerySpec, tag: Int?) {
        log.append("stop \(CapturingListenProvider.key(query))\(tag.map { " tag \($0)" } ?? "")")
    }

    func complete(_ query: QuerySpec, _ outcome: ListenOutcome) throws -> [SyncEvent] {
        let onComplete = try #require(completions[CapturingListenProvider.key(query.forListening)])
        return onComplete(outcome)
    }
}

/// A readable summary of an event: `listener type path [name] data`.
func describe(_ event: SyncEvent) -> String {
    switch event {
    case .data(let e):
        let listener = (e.registration as? TestRegistration)?.id ?? "?"
        return "\(listener) \(e.type.rawValue) \(e.query.path.wireForm)\(e.childName.map { " \($0)" } ?? "") \(e.node.jsonString(format: .export))"
    case .cancel(let c):
        return "\(listener(c.registration)) cancel \(c.query.path.wireForm) \(c.status)"
    }
}

private func listener(_ registration: any EventRegistration) -> String { (registration as? TestRegistration)?.id ?? "?" }

@Suite("Listen completion, cancellation and shadowing")
struct CancelEventTests {
    let provider = CapturingListenProvider()
    let tree: SyncTree
    init() { tree = SyncTree(listenProvider: provider) }

    func json(_ text: String) throws -> Node { try Node(jsonString: text) }

    @Test("a denied default listen cancels every registration at its location and removes them")
    func deniedDefaultListen() throws {
        let all = TestRegistration("all")
        let lastOne = TestRegistration("last")
        let other = TestRegistration("other")
        let defaultQuery = QuerySpec.default(at: "a")
        let limited = QuerySpec(path: "a", params: try QueryParams().limitedToLast(1))
        _ = tree.addEventRegistration(all, for: defaultQuery)
        _ = tree.addEventRegistration(lastOne, for: limited)
        _ = tree.addEventRegistration(other, for: .default(at: "b"))
        // The query is covered by the default listen at the same location: one listen each at a and b.
        #expect(provider.log == ["start /a|default", "start /b|default"])

        let events = try provider.complete(defaultQuery, .cancelled(reason: "permission_denied"))
        #expect(Set(events.map(describe)) == ["all cancel /a permission_denied", "last cancel /a permission_denied"])
        #expect(events.count == 2)
        for event in events {
            guard case .cancel(let cancel) = event else { continue }
            #expect(cancel.query.path == "a")
        }
        // A cancelled listen is not unlistened: the server already dropped it.
        #expect(provider.log == ["start /a|default", "start /b|default"])

        // Later data at a raises nothing for them; b still hears its own data.
        #expect(tree.applyServerOverwrite(path: "a", node: try json(#"{"x":1,"y":2}"#)).isEmpty)
        #expect(tree.applyServerOverwrite(path: "a/x", node: try json("3")).isEmpty)
        let bEvents = tree.applyServerOverwrite(path: "b", node: try json("5")).map(describe)
        #expect(bEvents == ["other value /b 5"])
        #expect(tree.tag(for: limited) == nil)
    }

    @Test("a denied query listen cancels its registrations only")
    func deniedQueryListen() throws {
        let first = TestRegistration("first")
        let second = TestRegistration("second")
        let query = QuerySpec(path: "q", params: try QueryParams().orderedBy(.child("h")).startingAt(Node(.number(1))))
        _ = tree.addEventRegistration(first, for: query)
        _ = tree.addEventRegistration(second, for: query)
        let tag = try #require(tree.tag(for: query))
        #expect(provider.log == ["start /q|\(query.identifier) tag \(tag)"])

        let events = try provider.complete(query, .cancelled(reason: "permission_denied"))
        #expect(Set(events.map(describe)) == ["first cancel /q permission_denied", "second cancel /q permission_denied"])
        #expect(events.count == 2)
        #expect(tree.tag(for: query) == nil)
        #expect(tree.applyServerOverwrite(path: "q", node: try json(#"{"k":{"h":2}}"#)).isEmpty)
        #expect(tree.applyTaggedQueryOverwrite(path: "q", node: try json(#"{"k":{"h":2}}"#), tag: tag).isEmpty)
    }

    @Test("listen complete on a default listen with no data raises value(null)")
    func listenCompleteWithoutData() throws {
        let registration = TestRegistration("r")
        let query = QuerySpec.default(at: "empty/place")
        #expect(tree.addEventRegistration(registration, for: query).isEmpty)
        let events = try provider.complete(query, .complete)
        #expect(events.map(describe) == ["r value /empty/place null"])
        guard case .data(let event)? = events.first else { return }
        #expect(event.node.isEmpty)
        // Completing again changes nothing.
        #expect(try provider.complete(query, .complete).isEmpty)
    }

    @Test("listen complete on a query listen with no data raises value(null)")
    func taggedListenCompleteWithoutData() throws {
        let registration = TestRegistration("r")
        let query = QuerySpec(path: "p", params: try QueryParams().orderedBy(.key).limitedToFirst(2))
        #expect(tree.addEventRegistration(registration, for: query).isEmpty)
        #expect(try provider.complete(query, .complete).map(describe) == ["r value /p null"])
    }

    @Test("a default listen above shadows a query listen below, and re-starts it when removed")
    func shadowing() throws {
        let child = TestRegistration("child")
        let parent = TestRegistration("parent")
        let childQuery = QuerySpec(path: "a/b", params: try QueryParams().orderedBy(.value).limitedToLast(2))
        _ = tree.addEventRegistration(child, for: childQuery)
        let tag = try #require(tree.tag(for: childQuery))
        let childKey = "/a/b|\(childQuery.identifier) tag \(tag)"
        #expect(provider.log == ["start \(childKey)"])

        _ = tree.addEventRegistration(parent, for: .default(at: "a"))
        #expect(provider.log == ["start \(childKey)", "start /a|default", "stop \(childKey)"])

        // Data for the parent reaches the child query too.
        let events = tree.applyServerOverwrite(path: "a", node: try json(#"{"b":{"x":1,"y":2,"z":3}}"#)).map(describe)
        #expect(events.contains("child value /a/b {\"y\":2,\"z\":3}"))
        #expect(events.contains("parent value /a {\"b\":{\"x\":1,\"y\":2,\"z\":3}}"))

        provider.log = []
        #expect(tree.removeEventRegistration(parent, for: .default(at: "a")).isEmpty)
        #expect(provider.log == ["start \(childKey)", "stop /a|default"])
        #expect(tree.tag(for: childQuery) == tag)

        // Removing the child query stops its own listen.
        provider.log = []
        _ = tree.removeEventRegistration(child, for: childQuery)
        #expect(provider.log == ["stop \(childKey)"])
    }

    @Test("a default listen at the root shadows default and query listens at several depths")
    func shadowingSeveral() throws {
        let q1 = QuerySpec(path: "x", params: try QueryParams().limitedToFirst(1))
        let d2 = QuerySpec.default(at: "y/z")
        _ = tree.addEventRegistration(TestRegistration("q1"), for: q1)
        _ = tree.addEventRegistration(TestRegistration("d2"), for: d2)
        provider.log = []
        let root = TestRegistration("root")
        _ = tree.addEventRegistration(root, for: .default(at: .root))
        let tag = try #require(tree.tag(for: q1))
        #expect(provider.log.first == "start /|default")
        #expect(Set(provider.log.dropFirst()) == ["stop /x|\(q1.identifier) tag \(tag)", "stop /y/z|default"])
        provider.log = []
        _ = tree.removeEventRegistration(root, for: .default(at: .root))
        #expect(Set(provider.log.dropLast()) == ["start /x|\(q1.identifier) tag \(tag)", "start /y/z|default"])
        #expect(provider.log.last == "stop /|default")
    }
}
