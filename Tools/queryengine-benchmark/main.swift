// queryengine-benchmark: server updates through the sync tree to listener events.
//
// Run in release mode: `swift run -c release queryengine-benchmark [phase ...]` with phases
// `wide`, `outside`, `load`, `listeners` (all by default; one phase alone is handy under perf).
// Figures are for comparison within one run on one machine, never asserted by tests. Each figure
// comes with its ratio to a baseline measured in the same run: the same data changes made to the
// bare CoreTree structures (nodes and sorted maps, no views, no events), the least work any engine
// built on them must do, so a figure from a busy machine can still be compared with one from an
// idle one.
import CMallocInfo
import CoreTree
import Foundation
import TestSupport
import QueryEngine

#if canImport(Glibc)
import Glibc
#endif

/// Counts the events it receives.
final class CountingRegistration: EventRegistration {
    var count = 0
    func responds(to type: EventType) -> Bool { true }
    var wantsCancelEvents: Bool { false }
}

/// Remembers each listen's completion so the benchmark can complete it like a server would.
final class ImmediateListenProvider: ListenProvider {
    var completions: [(ListenOutcome) -> [SyncEvent]] = []
    func startListening(_ query: QuerySpec, tag: Int?, hash: @escaping () -> String, onComplete: @escaping (ListenOutcome) -> [SyncEvent]) -> [SyncEvent] {
        completions.append(onComplete)
        return []
    }
    func stopListening(_ query: QuerySpec, tag: Int?) {}
}

func deliver(_ events: [SyncEvent]) {
    for case .data(let event) in events { (event.registration as? CountingRegistration)?.count += 1 }
}

/// Peak resident memory of this process in bytes.
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

/// Bytes the allocator has handed out and not had back.
func heapBytesInUse() -> Int { Int(mallinfo2().uordblks) }

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func megabytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

let childCount = 100_000
let updateCount = 100_000
let items: TreePath = "items"
let scoreIndex = QueryIndex.child("score")
func topQuery() -> QuerySpec { QuerySpec(path: items, params: try! QueryParams().orderedBy(.child("score")).limitedToLast(100)) }

/// 100,000 children `itemNNNNNN` = {score, name}, scores random below 1,000,000.
func makeChildren(seed: UInt64) -> [(key: ChildKey, value: Node)] {
    var random = SplitMix64(seed: seed)
    return (0..<childCount).map { index in
        (key: ChildKey(String(format: "item%06d", index)), value: Node(children: [
            (key: ChildKey("score"), value: Node(.number(Double(random.next() % 1_000_000)))),
            (key: ChildKey("name"), value: Node(.string("item \(index)"))),
        ]))
    }
}

/// The bare-structure baseline of `updates`: each score written into one key-ordered node and
/// moved within one score-ordered map, exactly the data changes a view with a complete,
/// score-ordered server cache has to make. Returns updates/s.
func bareUpdateRate(_ children: [(key: ChildKey, value: Node)], _ updates: [(name: ChildKey, score: Node)]) -> Double {
    var node = Node(children: SortedMap(sortedUniqueElements: children))
    var ordered = SortedMap(children.map { (key: scoreIndex.key(name: $0.key, node: $0.value), value: $0.value) })
    let scorePath: TreePath = "score"
    let elapsed = ContinuousClock().measure {
        for (name, score) in updates {
            let old = node.immediateChild(name)
            let new = old.updatingChild(at: scorePath, to: score)
            node = node.updatingImmediateChild(name, to: new)
            ordered = ordered.removing(scoreIndex.key(name: name, node: old)).inserting(scoreIndex.key(name: name, node: new), new)
        }
    }
    precondition(node.childCount == childCount && ordered.count == childCount)
    return Double(updates.count) / seconds(elapsed)
}

/// Random score updates to random children among `children` (all by default).
func randomUpdates(
    _ children: [(key: ChildKey, value: Node)], seed: UInt64, scores: Range<UInt64> = 0..<1_000_000,
    among candidates: [ChildKey]? = nil
) -> [(name: ChildKey, score: Node)] {
    var random = SplitMix64(seed: seed)
    let names = candidates ?? children.map(\.key)
    return (0..<updateCount).map { _ in
        (name: names[Int(random.next() % UInt64(names.count))],
         score: Node(.number(Double(scores.lowerBound + random.next() % UInt64(scores.count)))))
    }
}

/// A default and a limitToLast(100) orderByChild listener on 100,000 children; random score updates.
func wideLocation() {
    let children = makeChildren(seed: 3)
    let updates = randomUpdates(children, seed: 4)
    let heapBefore = heapBytesInUse()
    let provider = ImmediateListenProvider()
    var tree: SyncTree? = SyncTree(listenProvider: provider)
    let all = CountingRegistration()
    let top = CountingRegistration()
    deliver(tree!.addEventRegistration(all, for: .default(at: items)))
    deliver(tree!.addEventRegistration(top, for: topQuery()))
    let clock = ContinuousClock()
    let loadElapsed = clock.measure {
        deliver(tree!.applyServerOverwrite(path: items, node: Node(children: SortedMap(sortedUniqueElements: children))))
        for completion in provider.completions { deliver(completion(.complete)) }
    }
    let before = (all.count, top.count)
    let elapsed = clock.measure {
        for (name, score) in updates { deliver(tree!.applyServerOverwrite(path: items.child(name).child("score"), node: score)) }
    }
    let heapUsed = heapBytesInUse() - heapBefore
    let rate = Double(updateCount) / seconds(elapsed)
    print(String(format: "load %d children with a default and a limitToLast(100) orderByChild listener: %.2f s",
                 childCount, seconds(loadElapsed)))
    print(String(format: "server child updates: %.0f updates/s (%d updates, %.2f s); events: %d to the default listener, %d to the limit listener",
                 rate, updateCount, seconds(elapsed), all.count - before.0, top.count - before.1))
    print(String(format: "peak resident memory so far: %.1f MB (the sync tree holds %.1f MB of heap)",
                 megabytes(peakResidentBytes()), megabytes(heapUsed)))
    tree = nil
    let baseline = bareUpdateRate(children, updates)
    print(String(format: "  baseline, the same updates to one node and one score-ordered map: %.0f updates/s; the engine runs at %.2fx baseline",
                 baseline, rate / baseline))
}

/// A lone limitToLast(100) orderByChild listener holding the location's complete data (answered
/// untagged, as when the location is also kept synced); updates that leave its window untouched.
func outsideWindow() {
    let children = makeChildren(seed: 6)
    // Children and new scores below 900,000, under the window (the 100 highest of 100,000
    // scores up to 1,000,000), so the window never changes.
    let below = children.filter { ($0.value.child(at: "score").leafValue.flatMap { if case .number(let n) = $0 { n } else { nil } } ?? 0) < 900_000 }
    let updates = randomUpdates(children, seed: 7, scores: 0..<900_000, among: below.map(\.key))
    let provider = ImmediateListenProvider()
    let tree = SyncTree(listenProvider: provider)
    let top = CountingRegistration()
    deliver(tree.addEventRegistration(top, for: topQuery()))
    deliver(tree.applyServerOverwrite(path: items, node: Node(children: SortedMap(sortedUniqueElements: children))))
    for completion in provider.completions { deliver(completion(.complete)) }
    let before = top.count
    let elapsed = ContinuousClock().measure {
        for (name, score) in updates { deliver(tree.applyServerOverwrite(path: items.child(name).child("score"), node: score)) }
    }
    let rate = Double(updateCount) / seconds(elapsed)
    print(String(format: "updates outside the limit window: %.0f updates/s (%d updates, %.2f s; %d events to the lone limit listener)",
                 rate, updateCount, seconds(elapsed), top.count - before))
    let baseline = bareUpdateRate(children, updates)
    print(String(format: "  baseline, the same updates to one node and one score-ordered map: %.0f updates/s; the engine runs at %.2fx baseline",
                 baseline, rate / baseline))
}

/// Loading a large location into a lone `orderByChild` view: one index build.
func orderByChildLoad() {
    let children = makeChildren(seed: 5)
    let node = Node(children: SortedMap(sortedUniqueElements: children))
    let provider = ImmediateListenProvider()
    let tree = SyncTree(listenProvider: provider)
    let top = CountingRegistration()
    deliver(tree.addEventRegistration(top, for: topQuery()))
    let elapsed = ContinuousClock().measure {
        deliver(tree.applyServerOverwrite(path: items, node: node))
        for completion in provider.completions { deliver(completion(.complete)) }
    }
    print(String(format: "load %d children into a lone limitToLast(100) orderByChild view: %.3f s (%d events)",
                 childCount, seconds(elapsed), top.count))
    // Baseline: the index alone, built from the children by the bare sorted map.
    let baseline = ContinuousClock().measure {
        let ordered = SortedMap(node.children.map { (key: scoreIndex.key(name: $0.key, node: $0.value), value: $0.value) })
        precondition(ordered.count == childCount)
    }
    print(String(format: "  baseline, a sorted map of the children by score: %.3f s; the engine takes %.2fx baseline time",
                 seconds(baseline), seconds(elapsed) / seconds(baseline)))
}

/// 10,000 value listeners on distinct paths, each updated 10 times.
func manyListeners() {
    let listeners = 10_000
    let rounds = 10
    let provider = ImmediateListenProvider()
    let tree = SyncTree(listenProvider: provider)
    let paths = (0..<listeners).map { TreePath(keys: ["rooms", ChildKey("room\($0)"), "state"]) }
    let values = (0..<rounds).map { round in (0..<listeners).map { Node(.string("state \(round) of \($0)")) } }
    var registrations: [CountingRegistration] = []
    let clock = ContinuousClock()
    let addElapsed = clock.measure {
        for path in paths {
            let registration = CountingRegistration()
            registrations.append(registration)
            deliver(tree.addEventRegistration(registration, for: .default(at: path)))
        }
    }
    let updateElapsed = clock.measure {
        for round in 0..<rounds {
            for index in 0..<listeners { deliver(tree.applyServerOverwrite(path: paths[index], node: values[round][index])) }
        }
    }
    let received = registrations.filter { $0.count > 0 }.count
    let rate = Double(listeners * rounds) / seconds(updateElapsed)
    print(String(format: "%d listeners on distinct paths: added in %.2f s; %d updates each: %.0f updates/s (%.2f s); %d listeners got events",
                 listeners, seconds(addElapsed), rounds, rate, seconds(updateElapsed), received))
    // Baseline: the same values written into one bare tree.
    var root = Node.empty
    for index in 0..<listeners { root = root.updatingChild(at: paths[index], to: values[0][index]) }
    let baseline = clock.measure {
        for round in 0..<rounds {
            for index in 0..<listeners { root = root.updatingChild(at: paths[index], to: values[round][index]) }
        }
    }
    let baselineRate = Double(listeners * rounds) / seconds(baseline)
    print(String(format: "  baseline, the same updates to one bare tree: %.0f updates/s; the engine runs at %.2fx baseline",
                 baselineRate, rate / baselineRate))
}

/// An offline queue drained: n writes at one path (a marker written with every item, as an app
/// does) acknowledged oldest first, for two queue lengths. Linear draining keeps the time per
/// acknowledgement flat; a scan of every pending write at the path per acknowledgement makes it
/// grow with n.
func queueDrain() {
    let marker = TreePath(keys: ["queue", "last"])
    var perAck: [(count: Int, seconds: Double)] = []
    for count in [2_500, 10_000] {
        let tree = SyncTree(listenProvider: ImmediateListenProvider())
        deliver(tree.addEventRegistration(CountingRegistration(), for: .default(at: marker)))
        for index in 0..<count {
            deliver(try! tree.applyUserOverwrite(path: marker, node: Node(.number(Double(index))), writeId: Int64(index), visible: true, persist: false))
        }
        let elapsed = ContinuousClock().measure {
            for index in 0..<count { deliver(tree.ackUserWrite(writeId: Int64(index), revert: false, persist: false)) }
        }
        perAck.append((count, seconds(elapsed) / Double(count)))
        print(String(format: "%d writes at one path acknowledged oldest first: %.3f s (%.1f µs each)", count, seconds(elapsed), seconds(elapsed) / Double(count) * 1e6))
    }
    print(String(format: "  time per acknowledgement at %d writes / at %d writes: %.2fx (1x: linear; %dx: quadratic)",
                 perAck[1].count, perAck[0].count, perAck[1].seconds / perAck[0].seconds, perAck[1].count / perAck[0].count))
}

let phases: [(name: String, run: () -> Void)] = [
    ("wide", wideLocation), ("outside", outsideWindow), ("load", orderByChildLoad), ("listeners", manyListeners), ("queue", queueDrain),
]
let chosen = Set(CommandLine.arguments.dropFirst())
if let unknown = chosen.first(where: { name in !phases.contains { $0.name == name } }) {
    print("queryengine-benchmark: unknown phase \(unknown); phases: \(phases.map(\.name).joined(separator: ", "))")
    exit(64)
}
print("queryengine-benchmark (release build, one run, this machine)")
for phase in phases where chosen.isEmpty || chosen.contains(phase.name) { phase.run() }
print(String(format: "peak resident memory: %.1f MB", megabytes(peakResidentBytes())))
