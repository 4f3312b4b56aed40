import CoreTree
import QueryEngine

/// Replays one case of `syncPointSpec.json` against a bare ``SyncTree``, as the Firebase SDKs'
/// own harnesses do: a fake listen provider, no persistence, write ids from 0, every path
/// optionally prefixed (each case runs at the root and under `foo/bar/baz`).
final class SyncPointSpecRunner {
    let name: String
    let steps: [Node]
    let prefix: TreePath

    init(name: String, steps: [Node], prefix: TreePath) {
        self.name = name
        self.steps = steps
        self.prefix = prefix
    }

    /// A registration that wants every event.
    final class Registration: EventRegistration {
        let id: String
        init(id: String) { self.id = id }
        func responds(to type: EventType) -> Bool { true }
        var wantsCancelEvents: Bool { true }
    }

    /// Records listens and rejects duplicates and unknown unlistens, as the SDK harnesses do.
    final class ListenRecorder: ListenProvider {
        var active: Set<String> = []
        var problems: [String] = []

        func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (String) -> [SyncEvent]) -> [SyncEvent] {
            let key = "\(query.path.wireForm)|\(query.identifier)"
            if !active.insert(key).inserted { problems.append("duplicate listen for \(key)") }
            return []
        }

        func stopListening(_ query: QuerySpec, tag: Int?) {
            let key = "\(query.path.wireForm)|\(query.identifier)"
            if active.remove(key) == nil { problems.append("unlisten of \(key), which was not listened to") }
        }
    }

    /// Runs every step; returns the problems found (empty when the case passes).
    func run() -> [String] {
        let recorder = ListenRecorder()
        let tree = SyncTree(listenProvider: recorder)
        var nextWriteId: Int64 = 0
        var registrations: [String: Registration] = [:]
        var problems: [String] = []
        for (number, step) in steps.enumerated() {
            let type = step.string("type") ?? ""
            let path = prefix.appending(TreePath(unchecked: step.string("path") ?? ""))
            let actual: [SyncEvent]
            do {
                switch type {
                case "listen":
                    let query = QuerySpec(path: path, params: try SyncPointSpecRunner.params(step.immediateChild("params")))
                    let callbackId = step.immediateChild("callbackId").isEmpty ? "step\(number)" : "cb\(step.immediateChild("callbackId"))"
                    let registration = registrations[callbackId] ?? Registration(id: callbackId)
                    registrations[callbackId] = registration
                    actual = tree.addEventRegistration(registration, for: query)
                    if case .number(let expectedTag)? = step.immediateChild("params").immediateChild("tag").leafValue, !query.loadsAllData {
                        let tag = tree.tag(for: query)
                        if tag != Int(expectedTag) {
                            problems.append("step \(number): query tag \(tag.map(String.init) ?? "none"), expected \(Int(expectedTag))")
                        }
                    }
                case "unlisten":
                    let query = QuerySpec(path: path, params: try SyncPointSpecRunner.params(step.immediateChild("params")))
                    let callbackId = "cb\(step.immediateChild("callbackId"))"
                    actual = tree.removeEventRegistration(registrations[callbackId], for: query)
                case "serverUpdate":
                    let data = step.immediateChild("data")
                    if case .number(let tag)? = step.immediateChild("tag").leafValue {
                        actual = tree.applyTaggedQueryOverwrite(path: path, node: data, tag: Int(tag))
                    } else {
                        actual = tree.applyServerOverwrite(path: path, node: data)
                    }
                case "serverMerge":
                    let children = SyncPointSpecRunner.mergeChildren(step.immediateChild("data"))
                    if case .number(let tag)? = step.immediateChild("tag").leafValue {
                        actual = tree.applyTaggedQueryMerge(path: path, children: children, tag: Int(tag))
                    } else {
                        actual = tree.applyServerMerge(path: path, children: children)
                    }
                case "set":
                    let visible = step.immediateChild("visible").leafValue != .bool(false)
                    actual = tree.applyUserOverwrite(path: path, node: step.immediateChild("data"), writeId: nextWriteId, visible: visible)
                    nextWriteId += 1
                case "update":
                    actual = tree.applyUserMerge(path: path, children: SyncPointSpecRunner.mergeChildren(step.immediateChild("data")), writeId: nextWriteId)
                    nextWriteId += 1
                case "ackUserWrite":
                    guard case .number(let writeId)? = step.immediateChild("writeId").leafValue else {
                        problems.append("step \(number): ackUserWrite without writeId")
                        continue
                    }
                    actual = tree.ackUserWrite(writeId: Int64(writeId), revert: step.immediateChild("revert").leafValue == .bool(true))
                case "suppressWarning":
                    continue
                default:
                    problems.append("step \(number): unknown step type \"\(type)\"")
                    continue
                }
            } catch {
                problems.append("step \(number) (\(type)): \(error)")
                continue
            }
            let expected = step.immediateChild("events").children.map { expectedEvent($0.value) }
            let observed = actual.map(observedEvent)
            let exact = type == "listen" || type == "unlisten"
            if let mismatch = SyncPointSpecRunner.compare(expected: expected, actual: observed, exact: exact) {
                problems.append("step \(number) (\(type) \(path.wireForm)): \(mismatch)")
            }
        }
        problems += recorder.problems
        return problems
    }

    // MARK: - Reading the spec

    static func params(_ node: Node) throws -> QueryParams {
        var params = QueryParams()
        if node.isEmpty { return params }
        if case .string(let child)? = node.immediateChild("orderBy").leafValue {
            params = try params.orderedBy(.child(TreePath(unchecked: child)))
        }
        if node.hasChild("orderByKey") { params = try params.orderedBy(.key) }
        if node.hasChild("orderByPriority") { params = try params.orderedBy(.priority) }
        if node.hasChild("orderByValue") { params = try params.orderedBy(.value) }
        func bound(_ key: ChildKey) -> (Node, ChildKey?)? {
            let bound = node.immediateChild(key)
            guard node.hasChild(key) else { return nil }
            let name: ChildKey? = bound.immediateChild("name").leafValue.map {
                if case .string(let string) = $0 { return ChildKey(string) }
                return ChildKey(bound.immediateChild("name").jsonString())
            }
            return (bound.immediateChild("index"), name)
        }
        if let (value, name) = bound("startAt") { params = try params.startingAt(value, name: name) }
        if let (value, name) = bound("startAfter") { params = try params.startingAfter(value, name: name) }
        if let (value, name) = bound("endAt") { params = try params.endingAt(value, name: name) }
        if let (value, name) = bound("endBefore") { params = try params.endingBefore(value, name: name) }
        if let (value, name) = bound("equalTo") { params = try params.equalTo(value, name: name) }
        if case .number(let limit)? = node.immediateChild("limitToFirst").leafValue { params = try params.limitedToFirst(Int(limit)) }
        if case .number(let limit)? = node.immediateChild("limitToLast").leafValue { params = try params.limitedToLast(Int(limit)) }
        return params
    }

    static func mergeChildren(_ node: Node) -> [(path: TreePath, node: Node)] {
        node.children.map { (path: TreePath(unchecked: $0.key.stringValue), node: $0.value) }
    }

    // MARK: - Comparing events

    struct ComparableEvent: CustomStringConvertible {
        var path: TreePath
        var type: String
        var name: String?
        var previousName: String?
        var dataHash: String
        var data: String
        var listener: String

        var description: String {
            "\(type) \(path.wireForm)\(name.map { " name=\($0)" } ?? "")\(type == "child_removed" || type == "value" ? "" : " prev=\(previousName ?? "null")") \(data)"
        }

        func matches(_ other: ComparableEvent) -> Bool {
            path == other.path && type == other.type && name == other.name && dataHash == other.dataHash
                && (type == "child_removed" || previousName == other.previousName)
        }
    }

    func expectedEvent(_ node: Node) -> ComparableEvent {
        let data = node.immediateChild("data")
        return ComparableEvent(
            path: prefix.appending(TreePath(unchecked: node.string("path") ?? "")),
            type: node.string("type") ?? "?",
            name: node.immediateChild("name").isEmpty ? nil : node.string("name") ?? node.immediateChild("name").jsonString(),
            previousName: node.immediateChild("prevName").isEmpty ? nil : node.string("prevName") ?? node.immediateChild("prevName").jsonString(),
            dataHash: data.hash, data: data.jsonString(format: .export), listener: "")
    }

    func observedEvent(_ event: SyncEvent) -> ComparableEvent {
        switch event {
        case .data(let event):
            return ComparableEvent(
                path: event.query.path, type: event.type.rawValue, name: event.childName?.stringValue,
                previousName: event.previousName?.stringValue, dataHash: event.node.hash,
                data: event.node.jsonString(format: .export), listener: (event.registration as? Registration)?.id ?? "?")
        case .cancel(let cancel):
            return ComparableEvent(
                path: cancel.query.path, type: "cancel", name: nil, previousName: nil, dataHash: "", data: cancel.status,
                listener: (cancel.registration as? Registration)?.id ?? "?")
        }
    }

    /// Exact: same events in the same order. Set match: expected events grouped by consecutive
    /// path; within a group any order, but each listener's events must follow
    /// removed < added < moved < changed < value.
    static func compare(expected: [ComparableEvent], actual: [ComparableEvent], exact: Bool) -> String? {
        let listing = "expected \(expected), got \(actual)"
        guard expected.count == actual.count else { return "\(expected.count) events expected, \(actual.count) raised: \(listing)" }
        if exact {
            for (a, b) in zip(expected, actual) where !a.matches(b) { return "event \(b) where \(a) was expected: \(listing)" }
            return nil
        }
        var index = 0
        while index < expected.count {
            let path = expected[index].path
            var end = index
            while end < expected.count && expected[end].path == path { end += 1 }
            var remaining = Array(actual[index..<end])
            for event in expected[index..<end] {
                guard let position = remaining.firstIndex(where: { event.matches($0) }) else {
                    return "no raised event matches \(event): \(listing)"
                }
                remaining.remove(at: position)
            }
            let order = ["child_removed": 0, "child_added": 1, "child_moved": 2, "child_changed": 3, "value": 4]
            var lastByListener: [String: Int] = [:]
            for event in actual[index..<end] {
                let rank = order[event.type] ?? 5
                if let last = lastByListener[event.listener], last > rank {
                    return "events for one listener out of order: \(Array(actual[index..<end]))"
                }
                lastByListener[event.listener] = rank
            }
            index = end
        }
        return nil
    }
}

extension Node {
    /// The string value of a child, if it is a string leaf.
    func string(_ key: ChildKey) -> String? {
        if case .string(let value)? = immediateChild(key).leafValue { return value }
        return nil
    }
}
