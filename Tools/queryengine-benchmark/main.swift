// queryengine-benchmark: server updates through the sync tree to listener events.
//
// Run in release mode: `swift run -c release queryengine-benchmark`. Figures are for comparison
// within one run on one machine, never asserted by tests.
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

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func wideLocation() {
    let childCount = 100_000
    let provider = ImmediateListenProvider()
    let tree = SyncTree(listenProvider: provider)
    let items: TreePath = "items"
    let all = CountingRegistration()
    let top = CountingRegistration()
    let topQuery = try! QueryParams().orderedBy(.child("score")).limitedToLast(100)
    deliver(tree.addEventRegistration(all, for: .default(at: items)))
    deliver(tree.addEventRegistration(top, for: QuerySpec(path: items, params: topQuery)))

    var random = SplitMix64(seed: 3)
    var entries: [(key: ChildKey, value: Node)] = []
    for index in 0..<childCount {
        let child = Node(children: [
            (key: ChildKey("score"), value: Node(.number(Double(random.next() % 1_000_000)))),
            (key: ChildKey("name"), value: Node(.string("item \(index)"))),
        ])
        entries.append((ChildKey(String(format: "item%06d", index)), child))
    }
    let clock = ContinuousClock()
    let loadElapsed = clock.measure {
        deliver(tree.applyServerOverwrite(path: items, node: Node(children: SortedMap(entries))))
        for completion in provider.completions { deliver(completion(.complete)) }
    }
    let updates = 100_000
    var paths: [TreePath] = []
    var values: [Node] = []
    for _ in 0..<updates {
        let key = entries[Int(random.next() % UInt64(childCount))].key
        paths.append(items.child(key).child("score"))
        values.append(Node(.number(Double(random.next() % 1_000_000))))
    }
    let before = (all.count, top.count)
    let elapsed = clock.measure {
        for (path, value) in zip(paths, values) { deliver(tree.applyServerOverwrite(path: path, node: value)) }
    }
    print(String(format: "load %d children with a default and a limitToLast(100) orderByChild listener: %.2f s",
                 childCount, seconds(loadElapsed)))
    print(String(format: "server child updates: %.0f updates/s (%d updates, %.2f s); events: %d to the default listener, %d to the limit listener",
                 Double(updates) / seconds(elapsed), updates, seconds(elapsed), all.count - before.0, top.count - before.1))
    print(String(format: "peak resident memory so far: %.1f MB", Double(peakResidentBytes()) / 1_048_576))
}

func manyListeners() {
    let listeners = 10_000
    let provider = ImmediateListenProvider()
    let tree = SyncTree(listenProvider: provider)
    var registrations: [CountingRegistration] = []
    let clock = ContinuousClock()
    let addElapsed = clock.measure {
        for index in 0..<listeners {
            let registration = CountingRegistration()
            registrations.append(registration)
            deliver(tree.addEventRegistration(registration, for: .default(at: TreePath(keys: ["rooms", ChildKey("room\(index)"), "state"]))))
        }
    }
    let updateElapsed = clock.measure {
        for index in 0..<listeners {
            deliver(tree.applyServerOverwrite(
                path: TreePath(keys: ["rooms", ChildKey("room\(index)"), "state"]), node: Node(.string("open \(index)"))))
        }
    }
    let received = registrations.filter { $0.count > 0 }.count
    print(String(format: "%d listeners on distinct paths: added in %.2f s; one update each: %.0f updates/s (%.2f s); %d listeners got events",
                 listeners, seconds(addElapsed), Double(listeners) / seconds(updateElapsed), seconds(updateElapsed), received))
}

print("queryengine-benchmark (release build, one run, this machine)")
wideLocation()
manyListeners()
print(String(format: "peak resident memory: %.1f MB", Double(peakResidentBytes()) / 1_048_576))
