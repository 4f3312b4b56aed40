import CoreTree
import Foundation
import QueryEngine

/// A JSON object of the spec, read with JSONSerialization so that `null` members survive.
typealias SpecObject = [String: Any]

/// Replays one case of `syncPointSpec.json` against a bare ``SyncTree``, as the Firebase SDKs'
/// own harnesses do: a fake listen provider, no persistence, write ids from 0, every path
/// optionally prefixed (each case runs at the root and under `foo/bar/baz`).
final class SyncPointSpecRunner {
    let name: String
    let steps: [SpecObject]
    let prefix: TreePath

    init(name: String, steps: Data, prefix: TreePath) {
        self.name = name
        self.steps = (try? JSONSerialization.jsonObject(with: steps)) as? [SpecObject] ?? []
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

        func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]) -> [SyncEvent] {
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
            let type = step["type"] as? String ?? ""
            let path = prefix.appending(TreePath(unchecked: step["path"] as? String ?? ""))
            let actual: [SyncEvent]
            do {
                switch type {
                case "listen":
                    let query = QuerySpec(path: path, params: try SyncPointSpecRunner.params(step["params"] as? SpecObject))
                    let callbackId = step["callbackId"].map { "cb\($0)" } ?? "step\(number)"
                    let registration = registrations[callbackId] ?? Registration(id: callbackId)
                    registrations[callbackId] = registration
                    actual = tree.addEventRegistration(registration, for: query)
                    if let expectedTag = (step["params"] as? SpecObject)?["tag"] as? Int, !query.loadsAllData {
                        let tag = tree.tag(for: query)
                        if tag != expectedTag {
                            problems.append("step \(number): query tag \(tag.map(String.init) ?? "none"), expected \(expectedTag)")
                        }
                    }
                case "unlisten":
                    let query = QuerySpec(path: path, params: try SyncPointSpecRunner.params(step["params"] as? SpecObject))
                    let callbackId = "cb\(step["callbackId"] ?? "")"
                    actual = tree.removeEventRegistration(registrations[callbackId], for: query)
                case "serverUpdate":
                    let data = try Node(foundationValue: step["data"])
                    if let tag = step["tag"] as? Int {
                        actual = tree.applyTaggedQueryOverwrite(path: path, node: data, tag: tag)
                    } else {
                        actual = tree.applyServerOverwrite(path: path, node: data)
                    }
                case "serverMerge":
                    let children = try SyncPointSpecRunner.mergeChildren(step["data"])
                    if let tag = step["tag"] as? Int {
                        actual = tree.applyTaggedQueryMerge(path: path, children: children, tag: tag)
                    } else {
                        actual = tree.applyServerMerge(path: path, children: children)
                    }
                case "set":
                    let visible = step["visible"] as? Bool ?? true
                    actual = try tree.applyUserOverwrite(path: path, node: try Node(foundationValue: step["data"]), writeId: nextWriteId, visible: visible)
                    nextWriteId += 1
                case "update":
                    actual = try tree.applyUserMerge(path: path, children: try SyncPointSpecRunner.mergeChildren(step["data"]), writeId: nextWriteId)
                    nextWriteId += 1
                case "ackUserWrite":
                    guard let writeId = step["writeId"] as? Int else {
                        problems.append("step \(number): ackUserWrite without writeId")
                        continue
                    }
                    actual = tree.ackUserWrite(writeId: Int64(writeId), revert: step["revert"] as? Bool ?? false)
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
            let expected = try? (step["events"] as? [SpecObject] ?? []).map(expectedEvent)
            guard let expected else {
                problems.append("step \(number): unreadable events")
                continue
            }
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

    static func params(_ object: SpecObject?) throws -> QueryParams {
        var params = QueryParams()
        guard let object else { return params }
        if let child = object["orderBy"] as? String { params = try params.orderedBy(.child(TreePath(unchecked: child))) }
        if object["orderByKey"] != nil { params = try params.orderedBy(.key) }
        if object["orderByPriority"] != nil { params = try params.orderedBy(.priority) }
        if object["orderByValue"] != nil { params = try params.orderedBy(.value) }
        func bound(_ key: String) throws -> (Node, ChildKey?)? {
            guard let bound = object[key] as? SpecObject else { return nil }
            let name = (bound["name"] as? String).map { ChildKey($0) }
            return (try Node(foundationValue: bound["index"]), name)
        }
        if let (value, name) = try bound("startAt") { params = try params.startingAt(value, name: name) }
        if let (value, name) = try bound("startAfter") { params = try params.startingAfter(value, name: name) }
        if let (value, name) = try bound("endAt") { params = try params.endingAt(value, name: name) }
        if let (value, name) = try bound("endBefore") { params = try params.endingBefore(value, name: name) }
        if let (value, name) = try bound("equalTo") { params = try params.equalTo(value, name: name) }
        if let limit = object["limitToFirst"] as? Int { params = try params.limitedToFirst(limit) }
        if let limit = object["limitToLast"] as? Int { params = try params.limitedToLast(limit) }
        return params
    }

    /// Merge data: relative paths to values, `null` meaning delete.
    static func mergeChildren(_ data: Any?) throws -> [(path: TreePath, node: Node)] {
        guard let object = data as? SpecObject else { return [] }
        return try object.map { (path: TreePath(unchecked: $0.key), node: try Node(foundationValue: $0.value)) }
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

    func expectedEvent(_ object: SpecObject) throws -> ComparableEvent {
        let data = try Node(foundationValue: object["data"])
        let type = object["type"] as? String ?? "?"
        return ComparableEvent(
            path: prefix.appending(TreePath(unchecked: object["path"] as? String ?? "")),
            type: type,
            name: type == "value" ? nil : object["name"] as? String,
            previousName: object["prevName"] as? String,
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

