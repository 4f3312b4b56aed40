import CoreTree
import Presence
import Testing

@Suite struct OnDisconnectTreeTests {
    private func leaf(_ text: String) -> Node { Node(.string(text)) }

    @Test func aLaterSetReplacesWhatWasRememberedBelowIt() {
        var tree = OnDisconnectTree()
        tree.remember(leaf("a"), at: "users/ann/status")
        tree.remember(leaf("b"), at: "users/ann/last")
        tree.remember(leaf("gone"), at: "users/ann")
        #expect(tree.writes.map(\.path) == ["users/ann"])
        #expect(tree.writes.first?.node == leaf("gone"))
    }

    @Test func aSetBelowARememberedValueLandsInsideIt() {
        var tree = OnDisconnectTree()
        tree.remember(Node(children: [(key: ChildKey("x"), value: leaf("1"))]), at: "a")
        tree.remember(leaf("2"), at: "a/y")
        #expect(tree.writes.count == 1)
        #expect(tree.writes[0].node.child(at: "x") == leaf("1"))
        #expect(tree.writes[0].node.child(at: "y") == leaf("2"))
    }

    @Test func cancelForgetsEverythingAtAndBelowAPath() {
        var tree = OnDisconnectTree()
        tree.remember(leaf("1"), at: "a/b")
        tree.remember(leaf("2"), at: "a/c")
        tree.remember(leaf("3"), at: "d")
        tree.forget("a")
        #expect(tree.writes.map(\.path) == ["d"])
        tree.remember(Node(children: [(key: ChildKey("x"), value: leaf("1")), (key: ChildKey("y"), value: leaf("2"))]), at: "e")
        tree.forget("e/x")
        #expect(tree.writes.last?.node.child(at: "x").isEmpty == true)
        #expect(tree.writes.last?.node.child(at: "y") == leaf("2"))
    }

    @Test func updatesRememberEachChild() {
        var tree = OnDisconnectTree()
        tree.remember(update: [(path: "a", node: leaf("1")), (path: "b/c", node: .empty)], at: "root")
        #expect(tree.writes.map(\.path) == ["root/a", "root/b/c"])
        tree.removeAll()
        #expect(tree.isEmpty)
    }
}

@Suite struct InfoTreeTests {
    @Test func startsDisconnectedAndReportsOnlyChanges() {
        var info = InfoTree()
        #expect(info.value(at: ".info/connected") == Node(.bool(false)))
        #expect(info.set(InfoTree.connectedKey, to: Node(.bool(true))) == ".info/connected")
        #expect(info.set(InfoTree.connectedKey, to: Node(.bool(true))) == nil)
        #expect(info.value(at: ".info/connected") == Node(.bool(true)))
        #expect(info.value(at: "connected").isEmpty)
        #expect(InfoTree.contains(".info/serverTimeOffset"))
        #expect(!InfoTree.contains("info"))
    }

    @Test func serverClockAddsTheHandshakeOffset() {
        let offset = ServerClock.offset(serverMilliseconds: 10_500, localMilliseconds: 10_000)
        #expect(offset == 500)
        #expect(ServerClock(offsetMilliseconds: offset).serverMilliseconds(atLocal: 20_000) == 20_500)
    }
}
