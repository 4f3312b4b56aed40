import CoreTree
@testable import QueryEngine
import Testing

/// Views at one location reuse each other's work for one operation, so their caches keep sharing
/// one tree instead of each path-copying its own.
@Suite("Shared updates between views")
struct SharedUpdatesTests {
    private static let location: TreePath = "items"

    private static func children(_ count: Int) -> Node {
        var entries: [(key: ChildKey, value: Node)] = []
        for index in 0..<count {
            entries.append((ChildKey("item\(1000 + index)"), Node(children: [(key: ChildKey("score"), value: Node(.number(Double(index))))])))
        }
        return Node(children: SortedMap(entries))
    }

    private static func syncPoint(writes: WriteTree, data: Node) throws -> (SyncPoint, View, View) {
        let point = SyncPoint()
        let refs = writes.childWrites(at: location)
        let top = QuerySpec(path: location, params: try QueryParams().orderedBy(.child("score")).limitedToLast(10))
        _ = point.addRegistration(TestRegistration("all"), for: .default(at: location), writes: refs, serverCache: data, serverCacheComplete: true)
        _ = point.addRegistration(TestRegistration("top"), for: top, writes: refs, serverCache: data, serverCacheComplete: true)
        let defaultView = try #require(point.view(withIdentifier: QuerySpec.default(at: location).identifier))
        let topView = try #require(point.view(withIdentifier: top.identifier))
        return (point, defaultView, topView)
    }

    @Test("a server child update leaves every unfiltered cache on one shared tree")
    func sharesTheServerTree() throws {
        let writes = WriteTree()
        let (point, defaultView, topView) = try Self.syncPoint(writes: writes, data: Self.children(200))
        let path: TreePath = "item1005/score"
        var events: [SyncEvent] = []
        point.apply(
            .overwrite(source: .server, path: path, node: Node(.number(5000))), writes: writes.childWrites(at: Self.location),
            completeServerCache: nil, into: &events)

        let server = defaultView.viewCache.serverCache.node.node
        #expect(server.child(at: path) == Node(.number(5000)))
        let sharedWithOtherView = server.isIdentical(to: topView.viewCache.serverCache.node.node)
        let sharedWithEventCache = server.isIdentical(to: defaultView.viewCache.eventCache.node.node)
        #expect(sharedWithOtherView)
        #expect(sharedWithEventCache)
        // Sharing must not change what listeners hear: the child moved into the top 10.
        let kinds = events.compactMap { event -> String? in
            guard case .data(let data) = event else { return nil }
            return "\((data.registration as? TestRegistration)?.id ?? "?") \(data.type.rawValue) \(data.childName?.description ?? "")"
        }
        #expect(kinds.contains("all child_changed item1005"))
        #expect(kinds.contains("top child_added item1005"))
        #expect(kinds.contains("top child_removed item1190"))
    }

    @Test("a pending write keeps the event cache apart, and its events right")
    func pendingWriteIsNotShared() throws {
        var writes = WriteTree()
        writes.addOverwrite(path: "items/item1003/name", node: Node(.string("mine")), writeId: 1, visible: true)
        let data = Self.children(50)
        let (point, defaultView, _) = try Self.syncPoint(writes: writes, data: data)
        var events: [SyncEvent] = []
        point.apply(
            .overwrite(source: .server, path: "item1003/score", node: Node(.number(-1))), writes: writes.childWrites(at: Self.location),
            completeServerCache: nil, into: &events)

        let event = defaultView.viewCache.eventCache.node.node
        let shared = event.isIdentical(to: defaultView.viewCache.serverCache.node.node)
        #expect(!shared)
        #expect(event.child(at: "item1003/name") == Node(.string("mine")))
        #expect(event.child(at: "item1003/score") == Node(.number(-1)))
        #expect(defaultView.viewCache.serverCache.node.node.child(at: "item1003/name").isEmpty)
    }
}
