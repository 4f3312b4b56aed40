import CoreTree
import QueryEngine
import Testing

@Suite("WriteTree regressions")
struct WriteTreeRegressionTests {
    /// Found by the property test: acknowledging a set at /a dropped a later update's child a/10
    /// (the update's own path, the root, is not below /a, so the overlap went unnoticed and the
    /// whole compound write at /a was removed).
    @Test("acking a set keeps a later update's deeper child visible")
    func ackKeepsLaterDeeperMergeChild() throws {
        let tree = SyncTree(listenProvider: CapturingListenProvider())
        let registration = TestRegistration("r")
        _ = tree.addEventRegistration(registration, for: .default(at: .root))
        _ = tree.applyServerOverwrite(path: .root, node: try Node(jsonString: #"{"a":1,"b":2}"#))
        _ = tree.applyListenComplete(path: .root)
        _ = try tree.applyUserOverwrite(path: "a", node: Node(.number(3)), writeId: 0)
        _ = try tree.applyUserMerge(path: .root, children: [(path: "a/10", node: Node(.bool(true)))], writeId: 1)
        #expect(tree.applyServerOverwrite(path: "a", node: Node(.number(3))).isEmpty)
        #expect(tree.ackUserWrite(writeId: 0).isEmpty)
        #expect(tree.calcCompleteEventCache(path: .root) == (try Node(jsonString: #"{"a":{"10":true},"b":2}"#)))
        #expect(tree.pendingWrites.completeWriteData(at: "a/10") == Node(.bool(true)))
        // Reverting the update then shows the server's 3 again.
        #expect(tree.ackUserWrite(writeId: 1, revert: true).map(describe) == ["r child_changed / a 3", "r value / {\"a\":3,\"b\":2}"])
    }
}
