// A program without a data race that ThreadSanitizer on Linux still reports one in: evidence for
// the reports Tools/lib/sanitizer_summary.py explains ("both accesses inside Mutex.withLock").
//
// Four threads increment a Mutex-protected counter (it ends exact); when the Mutex is contended,
// Synchronization's _MutexHandle._lockSlow/_unlockSlow (a futex, in libswiftSynchronization.so,
// not instrumented) hand the lock over, TSan sees no happens-before edge and reports a "Swift
// access race" between the two withLock bodies. The second part hands an object built on a
// Dispatch queue to a task through a continuation (the pattern of EmbeddedServerStore.open); this
// toolchain (Swift 6.3.1) did not report it here in six runs.
//
//   swiftc -sanitize=thread -g Tools/lib/tsan-probe.swift -o /tmp/tsan-probe
//   TSAN_OPTIONS=halt_on_error=0:exitcode=0 /tmp/tsan-probe
//
// Seen: one "Swift access race" in each of six runs, the counter exact each time. TSan's report
// can take minutes while the other threads wait for the lock it holds; a run is at most seconds
// without it.
import Dispatch
import Synchronization

// Class A: a Mutex-protected counter incremented from four threads; no race is possible.
final class Counter: Sendable {
    let state = Mutex(0)
}
let counter = Counter()
let group = DispatchGroup()
for _ in 0..<4 {
    DispatchQueue.global().async(group: group) {
        for _ in 0..<20_000 { counter.state.withLock { $0 += 1 } }
    }
}
group.wait()
print("mutex: \(counter.state.withLock { $0 }) of 80000 increments")

// Class B: an object built on a queue's thread and handed to the awaiting task through a
// continuation, then read after the await (on whichever thread the task resumes).
final class Built: Sendable {
    let values: [Int]
    init() { values = Array(0..<8) }
}
func build() async -> Built {
    await withCheckedContinuation { continuation in
        DispatchQueue(label: "probe.build").async { continuation.resume(returning: Built()) }
    }
}
var total = 0
for _ in 0..<2_000 { total += await build().values.count }
print("continuation: \(total) of 16000 values read")
