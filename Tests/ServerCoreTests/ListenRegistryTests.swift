import CoreTree
import QueryEngine
import Testing
@testable import ServerCore

/// The listen registry on its own: which listens a write reaches and with what, and which
/// listens a change of identity or rules revokes.
@Suite("Listen registry")
struct ListenRegistryTests {
    private static func tree(_ json: String) throws -> Node { try Node(jsonString: json) }

    @Test("An overwrite reaches listens at and above its path whole, and below it only where the data there changed")
    func overwriteDeliveries() throws {
        var registry = ListenRegistry()
        let (above, at, changedBelow, unchangedBelow, elsewhere) =
            (RecordingSubscriber(), RecordingSubscriber(), RecordingSubscriber(), RecordingSubscriber(), RecordingSubscriber())
        let old = try Self.tree(#"{"rooms":{"a":{"name":"A","n":1},"b":{"name":"B"}}}"#)
        for (subscriber, path) in [(above, "rooms"), (at, "rooms/a"), (changedBelow, "rooms/a/n"), (unchangedBelow, "rooms/a/name"),
                                   (elsewhere, "rooms/b")] {
            _ = registry.add(subscriber, path: TreePath(unchecked: path), params: .default, tag: nil, caller: .admin) { old.child(at: $0) }
        }
        let new = old.updatingChild(at: "rooms/a", to: try Self.tree(#"{"name":"A","n":2}"#))
        let deliveries = registry.overwriteDeliveries(at: "rooms/a", old: old, new: new)
        func reached(_ subscriber: RecordingSubscriber) -> [ListenUpdate] {
            deliveries.filter { $0.subscriber === subscriber }.map(\.update)
        }
        #expect(reached(above).map(\.path) == ["rooms/a"])
        #expect(reached(at).map(\.path) == ["rooms/a"])
        guard case .overwrite(let n)? = reached(changedBelow).first?.change else {
            Issue.record("the listen at rooms/a/n got \(reached(changedBelow))")
            return
        }
        #expect(n == Node(.number(2)))
        #expect(reached(unchangedBelow).isEmpty, "its data did not change")
        #expect(reached(elsewhere).isEmpty)
    }

    @Test("A merge reaches a listen below it with the written children under it, or nothing when none touches it")
    func mergeDeliveries() throws {
        var registry = ListenRegistry()
        let (covering, untouched) = (RecordingSubscriber(), RecordingSubscriber())
        let old = try Self.tree(#"{"a":{"x":{"p":1},"y":1}}"#)
        _ = registry.add(covering, path: "a/x", params: .default, tag: nil, caller: .admin) { old.child(at: $0) }
        _ = registry.add(untouched, path: "a/y", params: .default, tag: nil, caller: .admin) { old.child(at: $0) }
        let children: [(path: TreePath, node: Node)] = [("x/p", Node(.number(2))), ("z", Node(.number(3)))]
        var new = old
        for child in children { new = new.updatingChild(at: TreePath("a").appending(child.path), to: child.node) }
        let deliveries = registry.mergeDeliveries(at: "a", children: children, old: old, new: new)
        guard case .merge(let inside)? = deliveries.first(where: { $0.subscriber === covering })?.update.change else {
            Issue.record("the listen at a/x got \(deliveries.map(\.update))")
            return
        }
        #expect(inside.map(\.path) == ["p"] && inside.first?.node == Node(.number(2)))
        #expect(!deliveries.contains { $0.subscriber === untouched })
    }

    @Test("A filtering query gets the changes to its window as one update")
    func queryDeliveries() throws {
        var registry = ListenRegistry()
        let subscriber = RecordingSubscriber()
        let old = try Self.tree(#"{"s":{"a":1,"b":5,"c":3}}"#)
        let params = try QueryParams.default.orderedBy(.value).limitedToLast(2)
        let initial = registry.add(subscriber, path: "s", params: params, tag: 7, caller: .admin) { old.child(at: $0) }
        #expect(initial == (try Self.tree(#"{"b":5,"c":3}"#)))
        let new = old.updatingChild(at: "s/a", to: Node(.number(10)))
        let deliveries = registry.overwriteDeliveries(at: "s/a", old: old, new: new)
        #expect(deliveries.count == 1 && deliveries.first?.update.tag == 7)
    }

    @Test("Judged again, only the listens the new identity may not read are removed and returned")
    func reauthorize() throws {
        var registry = ListenRegistry()
        let (mine, other) = (RecordingSubscriber(), RecordingSubscriber())
        let data = Node.empty
        let alice = Caller.user(auth: Node(children: ["uid": Node(.string("alice"))]))
        _ = registry.add(mine, path: "public", params: .default, tag: nil, caller: alice) { data.child(at: $0) }
        _ = registry.add(mine, path: "private", params: .default, tag: 1, caller: alice) { data.child(at: $0) }
        _ = registry.add(other, path: "private", params: .default, tag: nil, caller: alice) { data.child(at: $0) }
        let mayRead: (TreePath, QueryParams, Caller) -> Bool = { path, _, caller in
            if case .admin = caller { return true }
            return path == "public" || caller == alice
        }
        let revoked = registry.reauthorize(mine, as: .anonymous, mayRead: mayRead)
        #expect(revoked.map(\.path) == ["private"] && revoked.first?.tag == 1)
        #expect(revoked.allSatisfy { $0.subscriber === mine }, "another subscriber's listens are not judged")
        let removedAgain = registry.remove(mine, path: "private", params: .default, tag: 1)
        #expect(!removedAgain, "the revoked listen is gone")
        // Rules that refuse everyone but administrators revoke the rest.
        let rest = registry.revokeNoLongerAllowed { _, _, caller in if case .admin = caller { return true } else { return false } }
        #expect(Set(rest.map(\.path)) == ["public", "private"])
        #expect(registry.count == 0)
    }
}
