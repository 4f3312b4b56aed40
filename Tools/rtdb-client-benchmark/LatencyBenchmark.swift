import Foundation
import RealtimeDatabase

/// The figures of one latency run: local write → local `.value` event, in microseconds.
struct LatencyResult: Sendable {
    let store: StoreKind
    /// From before `setValue` to the observer block seeing the value.
    let event: Percentiles
    /// From before `setValue` to its return (the write durable in the local queue).
    let call: Percentiles
    /// The event latency over the first and the last tenth of the samples (the queue of
    /// unacknowledged writes grows by one per write, offline).
    let firstTenth: Percentiles
    let lastTenth: Percentiles
}

/// `latency`: an offline client with a `.value` observer on one location sets a new value,
/// again and again, and times how long the observer takes to see it.
///
/// The end instant is taken inside the listener block (on the client's callback queue), so the
/// time to wake the awaiting task is not counted.
struct LatencyBenchmark {
    let stores: [StoreKind]
    let samples: Int
    let warmup: Int
    let timeout: Duration

    func run() async throws -> [LatencyResult] {
        Report.line("== latency: local write → local .value event (offline client, \(warmup) warm-up + \(samples) samples)")
        var results: [LatencyResult] = []
        for store in stores {
            let result = try await measure(store)
            Report.line("  \(Format.pad(store.label, 16, left: true)) event p50 \(Format.micros(result.event.p50)) µs"
                + "  p99 \(Format.micros(result.event.p99))  max \(Format.micros(result.event.max))"
                + "  | setValue returns p50 \(Format.micros(result.call.p50)) µs  p99 \(Format.micros(result.call.p99))")
            results.append(result)
        }
        Self.printTable(results)
        return results
    }

    private func measure(_ store: StoreKind) async throws -> LatencyResult {
        let scratch = try ScratchDirectory("latency-\(store.rawValue)")
        defer { scratch.remove() }
        let database = try ClientSetup.offlineDatabase(store: store, directory: scratch.sub("store"))
        defer { database.shutdown() }
        let ref = database.reference(withPath: "latency/value")
        let probe = ValueProbe()
        let handle = ref.observe(.value) { snapshot in
            let now = ContinuousClock.now
            probe.observed(snapshot.value, at: now)
        }
        defer { ref.removeObserver(withHandle: handle) }
        let watchdog = Watchdog(timeout: timeout)
        defer { watchdog.stop() }

        var eventTimes: [Double] = []
        var callTimes: [Double] = []
        eventTimes.reserveCapacity(samples)
        callTimes.reserveCapacity(samples)
        let clock = ContinuousClock()
        for index in 0..<(warmup + samples) {
            let value = index + 1
            let signal = probe.arm(expecting: value)
            watchdog.guardSignal(signal)
            let start = clock.now
            ref.setValueLocally(value)
            let returned = clock.now
            guard let seen = await signal.wait() else {
                throw BenchmarkTimeout("latency (\(store.label)): write \(index) was not seen by the .value observer within \(timeout)")
            }
            if index >= warmup {
                eventTimes.append((seen - start).microseconds)
                callTimes.append((returned - start).microseconds)
            }
        }
        let tenth = max(1, eventTimes.count / 10)
        return LatencyResult(
            store: store, event: Percentiles(eventTimes), call: Percentiles(callTimes),
            firstTenth: Percentiles(Array(eventTimes.prefix(tenth))), lastTenth: Percentiles(Array(eventTimes.suffix(tenth))))
    }

    static func printTable(_ results: [LatencyResult]) {
        let base = results.first(where: { $0.store == .off })?.event.p50
        var table = Table([
            "store", "event p50 µs", "p99 µs", "max µs", "p50 vs off", "first 10% p50", "last 10% p50", "setValue p50 µs", "setValue p99 µs",
        ])
        for result in results {
            table.add([
                result.store.label, Format.micros(result.event.p50), Format.micros(result.event.p99),
                Format.micros(result.event.max), base.map { Format.ratio(result.event.p50, to: $0) } ?? "-",
                Format.micros(result.firstTenth.p50), Format.micros(result.lastTenth.p50),
                Format.micros(result.call.p50), Format.micros(result.call.p99),
            ])
        }
        table.print()
    }
}

/// Matches the value an observer sees against the one the benchmark is waiting for.
final class ValueProbe: @unchecked Sendable {
    // `expected` and `signal` are guarded by `lock`.
    private let lock = NSLock()
    private var expected: Int?
    private var signal: Signal?

    /// Starts waiting for `value`; the returned signal fires when the observer sees it.
    func arm(expecting value: Int) -> Signal {
        let signal = Signal()
        lock.withLock {
            expected = value
            self.signal = signal
        }
        return signal
    }

    /// Called from the listener block with the snapshot's value and the instant it ran.
    func observed(_ value: Any?, at instant: ContinuousClock.Instant) {
        guard let number = value as? NSNumber else { return }
        let matched: Signal? = lock.withLock {
            guard let expected, number.intValue == expected else { return nil }
            self.expected = nil
            return signal
        }
        matched?.fire(at: instant)
    }
}
